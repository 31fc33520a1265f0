/**
 * The YAML settings of the web tools (`tool_settings.web_fetch`, `tool_settings.web_search`),
 * read once per call with their defaults. A value of the wrong type is an error the model sees,
 * naming the setting, rather than a silent default.
 */
import { readDomainRules, type DomainRules } from './domain-rules.js';
import { WebError } from './web-errors.js';

export interface FetchSettings {
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  userAgent?: string;
  domains: DomainRules;
  /** Longest text a fetch returns to the model; the full text is saved in the run folder. */
  maxCharacters: number;
  /** Size of the parts a long page is split into for goal extraction. */
  extractChunkCharacters: number;
  /** Most parts of one page sent to the model for goal extraction. */
  extractMaxChunks: number;
}

export function readFetchSettings(settings: Record<string, unknown>): FetchSettings {
  return {
    timeoutMs: positiveNumber(settings, 'timeout_ms', 20_000),
    maxBytes: positiveNumber(settings, 'max_bytes', 5_000_000),
    maxRedirects: wholeNumber(settings, 'max_redirects', 5),
    userAgent: optionalString(settings, 'user_agent'),
    domains: readDomainRules(settings),
    maxCharacters: positiveNumber(settings, 'max_characters', 8_000),
    extractChunkCharacters: positiveNumber(settings, 'extract_chunk_characters', 12_000),
    extractMaxChunks: positiveInteger(settings, 'extract_max_chunks', 8),
  };
}

export function positiveNumber(settings: Record<string, unknown>, name: string, fallback: number): number {
  const value = settings[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) throw invalidSetting(name, value, 'a positive number');
  return value;
}

export function positiveInteger(settings: Record<string, unknown>, name: string, fallback: number): number {
  const value = positiveNumber(settings, name, fallback);
  if (!Number.isInteger(value)) throw invalidSetting(name, value, 'a whole number, 1 or more');
  return value;
}

export function wholeNumber(settings: Record<string, unknown>, name: string, fallback: number): number {
  const value = settings[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw invalidSetting(name, value, 'a whole number, 0 or more');
  return value;
}

export function optionalString(settings: Record<string, unknown>, name: string): string | undefined {
  const value = settings[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !value.trim()) throw invalidSetting(name, value, 'a non-empty string');
  return value;
}

export function invalidSetting(name: string, value: unknown, expected: string): WebError {
  return new WebError('web_settings_invalid', `The setting ${name} must be ${expected}, not ${JSON.stringify(value)}.`);
}
