/**
 * Web search that keeps working when an engine does not: engines are tried in order, each one
 * retried with growing delays when it fails in a passing way (server error, timeout, dropped
 * connection); a blocked engine (captcha, consent wall, HTTP 429 or 403), one without results,
 * one whose host does not resolve or refuses the connection, or one that runs out of retries
 * hands over to the next. The whole search has a deadline, so an offline machine gets its answer
 * in moments rather than after every engine's retries. The outcome names the engine that answered
 * and why each earlier one did not.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ToolContext } from 'manus-runtime';
import { acceptLanguage } from './accept-language.js';
import { EngineBlockedError } from './engine-blocked.js';
import { searchEngines } from './engines/search-engines.js';
import { httpRequest } from './http-request.js';
import { decodePage, pageKind } from './page-decoding.js';
import { readWebPage } from './read-page.js';
import { resultKey } from './result-links.js';
import { readSearchSettings, type SearchSettings } from './search-settings.js';
import type { SearchEngine, SearchQuery, SearchResult } from './search-types.js';
import { WebError, WebSearchError, WebUnreachableError, type EngineFailure } from './web-errors.js';

export interface SearchOptions {
  /** Default 5, at most 20. */
  numResults?: number;
  lang?: string;
  country?: string;
  /** Fetch each result page and add the start of its markdown. */
  fetchContent?: boolean;
  /** The web_search settings to use; default `context.settings`. */
  settings?: Record<string, unknown>;
  /** Where engine keys are looked up; default `process.env`. */
  environment?: NodeJS.ProcessEnv;
}

export interface SearchOutcome {
  engine: string;
  results: SearchResult[];
  /** Engines tried before the one that answered, and why each gave up. */
  failures: EngineFailure[];
}

export type SearchContext = Pick<ToolContext, 'signal' | 'settings' | 'logger' | 'network'>;

/** The most results one search returns; the engine APIs cap a page of results near this. */
export const maximumResults = 20;
const engineResponseBytes = 3_000_000;

export async function searchWeb(query: string, options: SearchOptions, context: SearchContext): Promise<SearchOutcome> {
  if (!query.trim()) throw new WebError('web_query_empty', 'The search query is empty; say what to search for.');
  const environment = options.environment ?? process.env;
  const settings = readSearchSettings(options.settings ?? context.settings, environment);
  // A language given with a region ("en-GB") also names the country when none is given.
  const [lang, region] = (options.lang?.trim() ?? '').split(/[-_]/);
  const request: SearchQuery = {
    query,
    numResults: Math.min(Math.max(1, Math.floor(options.numResults ?? 5)), maximumResults),
    lang: lang?.toLowerCase() || undefined,
    country: (options.country?.trim() || (region?.length === 2 ? region : '')).toLowerCase() || undefined,
  };
  const failures: EngineFailure[] = [];
  const deadline = performance.now() + settings.deadlineMs;
  for (const name of settings.engines) {
    const engine = searchEngines.get(name)!;
    const attempt = performance.now() >= deadline
      ? { failure: { engine: name, reason: `not tried: the search's time limit of ${settings.deadlineMs / 1000} s ran out`, attempts: 0 } }
      : await tryEngine(engine, request, settings, environment, deadline, context);
    if ('failure' in attempt) {
      failures.push(attempt.failure);
      context.logger.info(`web search: ${name} gave up after ${attempt.failure.attempts} attempt(s): ${attempt.failure.reason}`);
      continue;
    }
    const results = uniqueResults(attempt.results).slice(0, request.numResults);
    if (options.fetchContent) await addPageContent(results, settings, request, context);
    return { engine: name, results, failures };
  }
  const reasons = failures.map((failure) => `${failure.engine}: ${failure.reason}`).join('; ');
  throw new WebSearchError(`Every search engine failed for "${query}" (${reasons}).`, failures);
}

type EngineAttempt = { results: SearchResult[] } | { failure: EngineFailure };

async function tryEngine(
  engine: SearchEngine,
  query: SearchQuery,
  settings: SearchSettings,
  environment: NodeJS.ProcessEnv,
  deadline: number,
  context: SearchContext,
): Promise<EngineAttempt> {
  const variable = engine.environmentVariable;
  const fromEnvironment = variable ? environment[variable.name] || undefined : undefined;
  const credential = variable?.holds === 'key' ? fromEnvironment : undefined;
  const endpoint = settings.endpoints[engine.name] ?? (variable?.holds === 'endpoint' ? fromEnvironment : engine.defaultEndpoint);
  const giveUp = (reason: string, attempts: number): EngineAttempt => ({ failure: { engine: engine.name, reason, attempts } });
  if (variable && (variable.holds === 'key' ? !credential : !endpoint)) return giveUp(`not configured (${variable.name} is not set)`, 0);
  if (!endpoint) return giveUp('no endpoint configured', 0);

  for (let attempt = 1; ; attempt++) {
    try {
      const timeoutMs = Math.max(1, Math.min(settings.fetch.timeoutMs, Math.ceil(deadline - performance.now())));
      const results = await queryEngine(engine, query, endpoint, credential, settings, timeoutMs, context);
      if (results.length === 0) return giveUp('no results', attempt);
      return { results };
    } catch (error) {
      if (context.signal.aborted) throw error;
      const { reason, retry } = classifyFailure(error);
      if (!retry || attempt > settings.retries) return giveUp(reason, attempt);
      const delay = backoff(settings.retryDelayMs, attempt);
      if (performance.now() + delay >= deadline) return giveUp(`${reason}; no time left to retry`, attempt);
      context.logger.debug(`web search: ${engine.name} attempt ${attempt} failed (${reason}); retrying`);
      await sleep(delay, undefined, { signal: context.signal });
    }
  }
}

async function queryEngine(
  engine: SearchEngine,
  query: SearchQuery,
  endpoint: string,
  credential: string | undefined,
  settings: SearchSettings,
  timeoutMs: number,
  context: SearchContext,
): Promise<SearchResult[]> {
  const request = engine.buildRequest(query, endpoint, credential);
  const response = await httpRequest({
    ...request,
    fetch: context.network.fetch,
    signal: context.signal,
    timeoutMs,
    maxBytes: engineResponseBytes,
    maxRedirects: 5,
    headers: { accept: 'text/html,application/xhtml+xml', ...(settings.fetch.userAgent ? { 'user-agent': settings.fetch.userAgent } : {}), ...request.headers },
  });
  if (response.status >= 400) throw new EngineStatusError(response.status);
  const contentType = response.headers.get('content-type');
  const text = decodePage(response.body, contentType, pageKind(contentType, response.body));
  return engine
    .parse({ url: response.url, status: response.status, text }, query)
    .filter((result) => result.url)
    .map((result) => ({ ...result, title: result.title || result.url }));
}

class EngineStatusError extends Error {
  readonly status: number;

  constructor(status: number) {
    super(`HTTP ${status}`);
    this.status = status;
  }
}

function classifyFailure(error: unknown): { reason: string; retry: boolean } {
  if (error instanceof EngineBlockedError) return { reason: error.message, retry: false };
  if (error instanceof EngineStatusError) {
    if (error.status === 429 || error.status === 403) return { reason: `blocked: HTTP ${error.status}`, retry: false };
    return { reason: `HTTP ${error.status}`, retry: error.status >= 500 };
  }
  if (WebUnreachableError.isInstance(error)) {
    return { reason: error.message, retry: !lastingNetworkFailures.has(error.networkCode ?? '') };
  }
  if (WebError.isInstance(error)) {
    return { reason: error.message, retry: error.code === 'web_timeout' };
  }
  return { reason: error instanceof Error ? error.message : String(error), retry: false };
}

/**
 * A name that does not resolve (no network, no DNS, a mistyped host) or a host that refuses
 * connections gives the same answer a second later, so these are not retried.
 */
const lastingNetworkFailures = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'ECONNREFUSED', 'ENETUNREACH', 'EHOSTUNREACH']);

/** Doubles with each attempt; a little random extra keeps parallel runs from retrying in step. */
function backoff(baseMs: number, attempt: number): number {
  const delay = baseMs * 2 ** (attempt - 1);
  return delay + Math.random() * delay * 0.25;
}

function uniqueResults(results: SearchResult[]): SearchResult[] {
  const seen = new Set<string>();
  return results.filter((result) => {
    const key = resultKey(result.url);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const parallelFetches = 5;

async function addPageContent(results: SearchResult[], settings: SearchSettings, query: SearchQuery, context: SearchContext): Promise<void> {
  const { signal } = context;
  const language = acceptLanguage(query.lang, query.country);
  for (let start = 0; start < results.length; start += parallelFetches) {
    await Promise.all(
      results.slice(start, start + parallelFetches).map(async (result) => {
        try {
          const page = await readWebPage(result.url, settings.fetch, { fetch: context.network.fetch, signal, language });
          result.content = headOf(page.text, settings.contentCharacters);
        } catch (error) {
          if (signal.aborted) throw error;
          result.contentError = error instanceof Error ? error.message : String(error);
        }
      }),
    );
  }
}

function headOf(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const end = text.charCodeAt(limit) >= 0xdc00 && text.charCodeAt(limit) <= 0xdfff ? limit - 1 : limit;
  return `${text.slice(0, end).trimEnd()} [...]`;
}
