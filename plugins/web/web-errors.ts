/** Failures of web requests, searches and page reads, with stable codes. */
import { ToolError } from 'manus-runtime';

export type WebErrorCode =
  | 'web_url_invalid'
  | 'web_domain_blocked'
  | 'web_too_many_redirects'
  | 'web_timeout'
  | 'web_unreachable'
  | 'web_http_status'
  | 'web_unsupported_content'
  | 'web_query_empty'
  | 'web_search_failed'
  | 'web_extraction_failed'
  | 'web_settings_invalid';

export class WebError extends ToolError {
  declare readonly code: WebErrorCode;

  constructor(code: WebErrorCode, message: string) {
    super(message, code);
  }
}

/** A request that reached no server; `networkCode` says why (ENOTFOUND, ECONNREFUSED, ECONNRESET). */
export class WebUnreachableError extends WebError {
  readonly networkCode?: string;

  constructor(message: string, networkCode?: string) {
    super('web_unreachable', message);
    this.networkCode = networkCode;
  }
}

/** One engine's failure in a search, as reported to the model. */
export interface EngineFailure {
  engine: string;
  reason: string;
  /** Requests made to the engine before giving up on it. */
  attempts: number;
}

export class WebSearchError extends WebError {
  readonly failures: EngineFailure[];

  constructor(message: string, failures: EngineFailure[]) {
    super('web_search_failed', message);
    this.failures = failures;
  }
}
