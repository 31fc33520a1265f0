/**
 * Where each security-relevant setting was written, so a refusal or a request for the user's
 * consent can name the file, line and column it came from.
 */
import type { SourceLocation } from '../errors.js';
import { locate, type YamlPath, type YamlSource } from './yaml-source.js';

/** Dotted setting names ('sandbox.kind', 'tool_settings.browser_use.cdp_url') to where they were written. */
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
  ['permissions'],
  ['permissions', 'deny'],
  ['permissions', 'ask'],
  ['tool_settings', 'browser_use', 'executable_path'],
  ['tool_settings', 'browser_use', 'extra_args'],
  ['tool_settings', 'browser_use', 'cdp_url'],
  ['workspace'],
];

/** The locations of the tracked settings present in `raw`, the mapping at `path` in `source`. */
export function readSettingLocations(source: YamlSource, path: YamlPath, raw: unknown): SettingLocations {
  const locations: SettingLocations = {};
  for (const setting of trackedSettings) {
    if (valueAt(raw, setting) === undefined) continue;
    locations[setting.join('.')] = locate(source, [...path, ...setting]);
  }
  return locations;
}

function valueAt(raw: unknown, path: readonly string[]): unknown {
  let current = raw;
  for (const segment of path) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}
