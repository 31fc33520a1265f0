/**
 * Reads one web page without a browser: checks the URL and every redirect against the domain
 * rules, refuses PDFs and binaries before downloading them, decodes the charset, and turns HTML
 * into markdown. JSON and plain text come back as they are.
 */
import { checkDomainAllowed, parseWebUrl } from './domain-rules.js';
import { htmlToMarkdown } from './html-to-markdown.js';
import { httpRequest, type FetchFunction } from './http-request.js';
import { decodePage, pageKind, type PageKind } from './page-decoding.js';
import { WebError } from './web-errors.js';
import type { FetchSettings } from './web-settings.js';

export interface WebPage {
  /** The URL asked for. */
  requestedUrl: string;
  /** Where the page was found, after redirects. */
  url: string;
  title: string;
  kind: PageKind;
  /** Markdown for HTML; the document itself for JSON and text. */
  text: string;
  /** Set when the page was longer than `max_bytes` and only its start was read. */
  truncatedAtBytes?: number;
}

export interface ReadPageOptions {
  /** `context.network.fetch`: connections that refuse private addresses unless the user allows them. */
  fetch: FetchFunction;
  signal?: AbortSignal;
  /** Sent as Accept-Language, so sites that localise answer in the wanted language. */
  language?: string;
  /** Called for every redirect target before it is requested; throws to refuse one. */
  checkRedirect?: (url: URL) => Promise<void>;
}

const acceptHeader = 'text/html,application/xhtml+xml,application/json;q=0.9,text/plain;q=0.8,*/*;q=0.5';

export async function readWebPage(address: string, settings: FetchSettings, options: ReadPageOptions): Promise<WebPage> {
  const requestedUrl = parseWebUrl(address);
  const headers: Record<string, string> = { accept: acceptHeader };
  if (settings.userAgent) headers['user-agent'] = settings.userAgent;
  if (options.language) headers['accept-language'] = options.language;
  const response = await httpRequest({
    url: requestedUrl,
    fetch: options.fetch,
    headers,
    signal: options.signal,
    timeoutMs: settings.timeoutMs,
    maxBytes: settings.maxBytes,
    maxRedirects: settings.maxRedirects,
    checkUrl: async (url) => {
      parseWebUrl(url.href);
      checkDomainAllowed(url, settings.domains);
      if (url.href !== requestedUrl.href) await options.checkRedirect?.(url);
    },
    checkResponse: (answer, url) => {
      const declared = answer.headers.get('content-type');
      refuseUnreadable(pageKind(declared, Buffer.alloc(0)), url, declared);
    },
  });
  const contentType = response.headers.get('content-type');
  const kind = pageKind(contentType, response.body);
  refuseUnreadable(kind, response.url, contentType);
  const decoded = decodePage(response.body, contentType, kind);
  if (response.status >= 400) {
    const excerpt = (kind === 'html' ? htmlToMarkdown(decoded).markdown : decoded).slice(0, 300).trim();
    throw new WebError('web_http_status', `${response.url.href} answered HTTP ${response.status}${excerpt ? `: ${excerpt}` : '.'}`);
  }
  const page = kind === 'html' ? htmlToMarkdown(decoded, { url: response.url.href }) : { title: '', markdown: decoded };
  return {
    requestedUrl: requestedUrl.href,
    url: response.url.href,
    title: page.title,
    kind,
    text: page.markdown,
    truncatedAtBytes: response.truncated ? settings.maxBytes : undefined,
  };
}

function refuseUnreadable(kind: PageKind, url: URL, contentType: string | null): void {
  if (kind === 'pdf') {
    throw new WebError('web_unsupported_content', `${url.href} is a PDF; web_fetch reads HTML, JSON and text only. Download it and read it with another tool.`);
  }
  if (kind === 'binary') {
    throw new WebError('web_unsupported_content', `${url.href} is not a text document (${contentType ?? 'binary content'}); web_fetch reads HTML, JSON and text only.`);
  }
}
