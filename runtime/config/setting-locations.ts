/**
 * Where each security-relevant setting was written, so a refusal or a request for the user's
 * consent can name the file, line and column it came from.
 */
import type { SourceLocation } from '../contract/errors.js';
import { locate, type YamlPath, type YamlSource } from './yaml-source.js';

/** Dotted setting names ('sandbox.kind', 'tool_settings.<tool>.<key>') to where they were written. */
export type SettingLocations = Record<string, SourceLocation>;

const trackedSettings: ReadonlyArray<readonly string[]> = [
  ['sandbox'],
  ['sandbox', 'kind'],
  ['sandbox', 'network'],
  ['sandbox', 'image'],
  ['sandbox', 'memory_mb'],
  ['sandbox', 'cpus'],
  ['sandbox', 'pids'],
  ['sandbox', 'pass_env'],
  ['sandbox', 'user'],
  ['permissions'],
  ['permissions', 'deny'],
  ['permissions', 'ask'],
  ['workspace'],
];

/** The locations of the tracked settings present in `raw`, the mapping at `path` in `source`. */
export function readSettingLocations(source: YamlSource, path: YamlPath, raw: unknown): SettingLocations {
  const locations: SettingLocations = {};
  // Every tool setting: which of them need a grant is for each tool to say, once it is loaded.
  const toolSettings = Object.entries(asMapping(valueAt(raw, ['tool_settings'])))
    .flatMap(([tool, settings]) => nestedKeys(settings, ['tool_settings', tool]));
  for (const setting of [...trackedSettings, ...toolSettings]) {
    if (valueAt(raw, setting) === undefined) continue;
    locations[setting.join('.')] = locate(source, [...path, ...setting]);
  }
  return locations;
}

/** Every key inside a tool's settings, nested ones included (`endpoints.tavily`). */
function nestedKeys(value: unknown, path: string[]): string[][] {
  return Object.entries(asMapping(value)).flatMap(([key, inner]) => [[...path, key], ...nestedKeys(inner, [...path, key])]);
}

function asMapping(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : {};
}

function valueAt(raw: unknown, path: readonly string[]): unknown {
  let current = raw;
  for (const segment of path) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}
