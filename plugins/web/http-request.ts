/**
 * One HTTP exchange for the web tools: redirects followed by hand (so each hop can be checked),
 * a time limit over the whole exchange including the body, and a cap on the bytes read. Requests
 * go through the context's network (`context.network.fetch`), whose connections refuse private
 * addresses unless the user allows them.
 */
import { ManusError } from 'manus-runtime';
import { WebError, WebUnreachableError } from './web-errors.js';

/** What sends the requests: `context.network.fetch`. */
export type FetchFunction = (input: URL, init: RequestInit) => Promise<Response>;

export const defaultUserAgent =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

export interface HttpRequest {
  url: URL;
  fetch: FetchFunction;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** The caller's signal (the run being stopped); the time limit is added to it. */
  signal?: AbortSignal;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  /** Called for the first URL and every redirect target; throws (or rejects) to refuse one. */
  checkUrl?: (url: URL) => void | Promise<void>;
  /** Called once the headers arrive; throws to refuse the response before its body is read. */
  checkResponse?: (response: Response, url: URL) => void;
}

export interface HttpResponse {
  /** Where the exchange ended, after redirects. */
  url: URL;
  status: number;
  headers: Headers;
  body: Buffer;
  /** The body was longer than `maxBytes` and was cut there. */
  truncated: boolean;
  redirects: string[];
}

const redirectStatuses = new Set([301, 302, 303, 307, 308]);

export async function httpRequest(request: HttpRequest): Promise<HttpResponse> {
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
  try {
    return await exchange(request, signal);
  } catch (error) {
    if (request.signal?.aborted) throw request.signal.reason ?? error;
    if (timeout.aborted) {
      throw new WebError('web_timeout', `${request.url.href} did not answer within ${request.timeoutMs / 1000} s.`);
    }
    if (WebError.isInstance(error)) throw error;
    if (ManusError.isInstance(error) && error.code === 'network_private_address') {
      throw new WebError('web_private_address', `${request.url.href} is refused: ${error.message}`);
    }
    if (ManusError.isInstance(error) && error.code === 'network_host_not_allowed') {
      throw new WebError('web_host_not_allowed', `${request.url.href} is refused: ${error.message}`);
    }
    const reason = networkReason(error);
    throw new WebUnreachableError(`${request.url.href} could not be reached: ${reason.text}.`, reason.code);
  }
}

async function exchange(request: HttpRequest, signal: AbortSignal): Promise<HttpResponse> {
  let url = request.url;
  let method = request.method ?? 'GET';
  let body = request.body;
  const redirects: string[] = [];
  for (;;) {
    await request.checkUrl?.(url);
    const response = await request.fetch(url, {
      method,
      headers: { 'user-agent': defaultUserAgent, ...request.headers },
      body,
      redirect: 'manual',
      signal,
    });
    const location = response.headers.get('location');
    if (redirectStatuses.has(response.status) && location) {
      await response.body?.cancel();
      if (redirects.length >= request.maxRedirects) {
        throw new WebError('web_too_many_redirects', `${request.url.href} redirected more than ${request.maxRedirects} times.`);
      }
      url = new URL(location, url);
      redirects.push(url.href);
      // As browsers do: 303, and 301/302 after a POST, turn the next request into a GET.
      if (response.status === 303 || (method === 'POST' && response.status !== 307 && response.status !== 308)) {
        method = 'GET';
        body = undefined;
      }
      continue;
    }
    try {
      request.checkResponse?.(response, url);
    } catch (error) {
      await response.body?.cancel();
      throw error;
    }
    const { bytes, truncated } = await readCapped(response, request.maxBytes);
    return { url, status: response.status, headers: response.headers, body: bytes, truncated, redirects };
  }
}

async function readCapped(response: Response, maxBytes: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  if (!response.body) return { bytes: Buffer.alloc(0), truncated: false };
  const chunks: Buffer[] = [];
  let length = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: Buffer.concat(chunks, length), truncated: false };
    chunks.push(Buffer.from(value));
    length += value.byteLength;
    if (length > maxBytes) {
      await reader.cancel();
      return { bytes: Buffer.concat(chunks, length).subarray(0, maxBytes), truncated: true };
    }
  }
}

/** The useful part of a connection failure (ECONNREFUSED, ENOTFOUND), on the error or, from undici, in its `cause`. */
function networkReason(error: unknown): { text: string; code?: string } {
  const direct = error as { code?: string; cause?: { code?: string; message?: string } } | undefined;
  if (typeof direct?.code === 'string') return { text: direct.code, code: direct.code };
  const cause = direct?.cause;
  if (cause?.code) return { text: cause.code, code: cause.code };
  if (cause?.message) return { text: cause.message };
  return { text: error instanceof Error ? error.message : String(error) };
}
