/**
 * `tool_settings.web_search`: which engines to try and in what order, retries, the time limit of
 * the whole search, endpoints, and
 * how much of each page `fetch_content` keeps. Requests read the web_fetch settings names
 * (timeout_ms, max_bytes, max_redirects, allowed_domains, blocked_domains, user_agent) from the
 * same block; the domain rules apply to the result pages fetched, not to the engines.
 */
import { defaultEngineOrder, searchEngines } from './engines/search-engines.js';
import { invalidSetting, positiveNumber, readFetchSettings, wholeNumber, type FetchSettings } from './web-settings.js';

export interface SearchSettings {
  engines: string[];
  /** Further attempts after an engine's first one fails in a way worth retrying. */
  retries: number;
  /** The first retry waits this long; each later one twice as long as the one before. */
  retryDelayMs: number;
  /** The whole search, every engine and retry, ends within this long; engines not reached are named. */
  deadlineMs: number;
  endpoints: Record<string, string>;
  /** How much of each result page `fetch_content` adds. */
  contentCharacters: number;
  fetch: FetchSettings;
}

export function readSearchSettings(settings: Record<string, unknown>, environment: NodeJS.ProcessEnv): SearchSettings {
  const endpoints = readEndpoints(settings.endpoints);
  return {
    engines: readEngines(settings.engines) ?? defaultEngineOrder(environment, endpoints),
    retries: wholeNumber(settings, 'retries', 2),
    retryDelayMs: positiveNumber(settings, 'retry_delay_ms', 1_000),
    deadlineMs: positiveNumber(settings, 'deadline_ms', 30_000),
    endpoints,
    contentCharacters: positiveNumber(settings, 'content_characters', 1_200),
    fetch: readFetchSettings(settings),
  };
}

function readEngines(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  const names = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(names) || names.length === 0 || names.some((name) => typeof name !== 'string')) {
    throw invalidSetting('engines', value, 'a non-empty list of engine names');
  }
  const normalized = names.map((name: string) => name.trim().toLowerCase());
  const unknown = normalized.filter((name) => !searchEngines.has(name));
  if (unknown.length > 0) {
    throw invalidSetting('engines', value, `a list of known engines (${[...searchEngines.keys()].join(', ')}); unknown: ${unknown.join(', ')}`);
  }
  return [...new Set(normalized)];
}

function readEndpoints(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalidSetting('endpoints', value, 'a map from engine name to URL');
  const endpoints: Record<string, string> = {};
  for (const [name, address] of Object.entries(value)) {
    if (!searchEngines.has(name)) throw invalidSetting(`endpoints.${name}`, address, `for a known engine (${[...searchEngines.keys()].join(', ')})`);
    if (typeof address !== 'string' || !URL.canParse(address)) throw invalidSetting(`endpoints.${name}`, address, 'an absolute URL');
    endpoints[name] = address;
  }
  return endpoints;
}
