/** The shapes shared by the search engines and the fallback logic that tries them in turn. */

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
  /** The start of the page's markdown, when the search asked for page content. */
  content?: string;
  /** Why the page's content could not be read, when it was asked for. */
  contentError?: string;
}

export interface SearchQuery {
  query: string;
  numResults: number;
  /** A language code such as `en` or `de`. */
  lang?: string;
  /** A two-letter country code such as `us` or `de`. */
  country?: string;
}

/** The request an engine wants sent for a query. */
export interface EngineRequest {
  url: URL;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

/** What came back from the engine, for it to parse. */
export interface EngineResponse {
  /** Where the exchange ended, after redirects (a consent or captcha page shows here). */
  url: URL;
  status: number;
  text: string;
}

export interface SearchEngine {
  name: string;
  /** The engine's search URL; `tool_settings.web_search.endpoints.<name>` replaces it. */
  defaultEndpoint?: string;
  /** The environment variable an engine needs: its API key, or (for a self-hosted one) its base URL. */
  environmentVariable?: { name: string; holds: 'key' | 'endpoint' };
  buildRequest(query: SearchQuery, endpoint: string, credential: string | undefined): EngineRequest;
  /** Returns the results, or throws EngineBlockedError when the page is a captcha or consent wall. */
  parse(response: EngineResponse, query: SearchQuery): SearchResult[];
}
