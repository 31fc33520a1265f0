/** Failures of web requests, searches and page reads, with stable codes. */
import { ManusError, ToolError } from 'manus-runtime';

export type WebErrorCode =
  | 'web_url_invalid'
  | 'web_domain_blocked'
  | 'web_redirect_refused'
  | 'web_private_address'
  | 'web_host_not_allowed'
  | 'web_too_many_redirects'
  | 'web_timeout'
  | 'web_unreachable'
  | 'web_http_status'
  | 'web_unsupported_content'
  | 'web_query_empty'
  | 'web_search_failed'
  | 'web_extraction_failed'
  | 'web_settings_invalid';

const webErrorMarker = 'manus.error.WebError';
const webErrorSymbol = Symbol.for(webErrorMarker);

export class WebError extends ToolError {
  private readonly [webErrorSymbol] = true;
  declare readonly code: WebErrorCode;

  constructor(code: WebErrorCode, message: string) {
    super(message, code);
  }

  static isInstance(error: unknown): error is WebError {
    return ManusError.hasMarker(error, webErrorMarker);
  }
}

const webUnreachableErrorMarker = 'manus.error.WebUnreachableError';
const webUnreachableErrorSymbol = Symbol.for(webUnreachableErrorMarker);

/** A request that reached no server; `networkCode` says why (ENOTFOUND, ECONNREFUSED, ECONNRESET). */
export class WebUnreachableError extends WebError {
  private readonly [webUnreachableErrorSymbol] = true;
  readonly networkCode?: string;

  constructor(message: string, networkCode?: string) {
    super('web_unreachable', message);
    this.networkCode = networkCode;
  }

  static isInstance(error: unknown): error is WebUnreachableError {
    return ManusError.hasMarker(error, webUnreachableErrorMarker);
  }
}

/** One engine's failure in a search, as reported to the model. */
export interface EngineFailure {
  engine: string;
  reason: string;
  /** Requests made to the engine before giving up on it. */
  attempts: number;
}

const webSearchErrorMarker = 'manus.error.WebSearchError';
const webSearchErrorSymbol = Symbol.for(webSearchErrorMarker);

export class WebSearchError extends WebError {
  private readonly [webSearchErrorSymbol] = true;
  readonly failures: EngineFailure[];

  constructor(message: string, failures: EngineFailure[]) {
    super('web_search_failed', message);
    this.failures = failures;
  }

  static isInstance(error: unknown): error is WebSearchError {
    return ManusError.hasMarker(error, webSearchErrorMarker);
  }
}
