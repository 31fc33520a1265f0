/**
 * The `fetch` the model SDK sends its requests through, over node:http. The SDK needs a request
 * out and a standard Response back; Node's own fetch spends most of a millisecond per request on
 * what a model call does not use (request cloning, stream plumbing), and that was most of the
 * runtime's own time per step. What the SDK relies on behaves as fetch does: redirects (without
 * credentials across origins), content encodings, streams, and aborts.
 */
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders, type RequestOptions } from 'node:http';
import type * as Https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable, type Transform } from 'node:stream';
import type * as Zlib from 'node:zlib';

// Idle connections close after 4 s, as Node's fetch does, so a request rarely meets a connection
// the server has just closed.
const idleTimeoutMs = 4000;

interface Transport {
  agent: HttpAgent;
  request(url: URL, options: RequestOptions, onResponse: (message: IncomingMessage) => void): ClientRequest;
}

export interface HttpFetchOptions {
  /** Resolves host names for every connection, so a caller can check the very address connected to. */
  lookup?: LookupFunction;
  /** Called for the first URL and every redirect target before it is sent; throws to refuse it. */
  checkUrl?: (url: URL) => void;
  /**
   * JSON replies are read whole before the Response is made (the model SDK reads them whole
   * anyway). Off for callers that cap what they read.
   */
  readJsonWhole?: boolean;
}

import type { FetchFunction } from '../../contract/tool-network.js';

export type { FetchFunction };

/** A fetch with connections of its own. */
export function createHttpFetch(options: HttpFetchOptions = {}): FetchFunction {
  const agentOptions = { keepAlive: true, timeout: idleTimeoutMs, ...(options.lookup ? { lookup: options.lookup } : {}) };
  const http: Transport = { agent: new HttpAgent(agentOptions), request: httpRequest };
  // TLS is loaded when a URL first needs it: a local model server never does.
  let https: Promise<Transport> | undefined;
  const transportFor = (url: URL): Transport | Promise<Transport> => {
    if (url.protocol !== 'https:') return http;
    https ??= import('node:https').then((module: typeof Https) => ({ agent: new module.Agent(agentOptions), request: module.request }));
    return https;
  };
  return (input, init) => fetchOver(transportFor, options, input, init);
}

const redirectStatuses = new Set([301, 302, 303, 307, 308]);
const nullBodyStatuses = new Set([101, 204, 205, 304]);
const maxRedirects = 20;
// The only headers kept when a redirect leaves the origin. fetch drops the credential headers it
// knows; a profile's own headers (`headers_env`) may carry keys under any name, so every other
// header stays with the origin it was meant for, and none follows a redirect to another host or
// from https to http.
const crossOriginHeaders = new Set(['accept', 'accept-encoding', 'accept-language', 'content-type', 'content-length', 'user-agent']);
const crossOriginHeaderPrefix = 'x-stainless-';
const decoders: Record<string, (zlib: typeof Zlib) => Transform> = {
  gzip: (zlib) => zlib.createGunzip(),
  'x-gzip': (zlib) => zlib.createGunzip(),
  deflate: (zlib) => zlib.createInflate(),
  br: (zlib) => zlib.createBrotliDecompress(),
};

export const httpFetch: FetchFunction = createHttpFetch({ readJsonWhole: true });

async function fetchOver(
  transportFor: (url: URL) => Transport | Promise<Transport>,
  options: HttpFetchOptions,
  input: string | URL | Request,
  init: RequestInit = {},
): Promise<Response> {
  let url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  let method = (init.method ?? 'GET').toUpperCase();
  let body = requestBody(init.body);
  // The SDK hands over a Headers already checked; anything else is checked by making one.
  const headers: OutgoingHttpHeaders = Object.fromEntries(init.headers instanceof Headers ? init.headers : new Headers(init.headers));
  const signal = init.signal ?? undefined;
  for (let redirects = 0; ; redirects += 1) {
    options.checkUrl?.(url);
    const message = await send(await transportFor(url), url, method, headers, body, signal);
    const location = message.headers.location;
    if (!redirectStatuses.has(message.statusCode ?? 0) || !location || init.redirect === 'manual') return toResponse(message, signal, options.readJsonWhole === true);
    message.resume();
    if (redirects === maxRedirects) throw new TypeError(`too many redirects (more than ${maxRedirects})`);
    const next = new URL(location, url);
    if (next.origin !== url.origin) dropOriginHeaders(headers);
    url = next;
    // As fetch does: 303, and 301 or 302 after a POST, continue as a GET without the body.
    if (message.statusCode === 303 || (method === 'POST' && (message.statusCode === 301 || message.statusCode === 302))) {
      method = 'GET';
      body = undefined;
      delete headers['content-type'];
      delete headers['content-length'];
    }
  }
}

function dropOriginHeaders(headers: OutgoingHttpHeaders): void {
  for (const name of Object.keys(headers)) {
    if (!crossOriginHeaders.has(name) && !name.startsWith(crossOriginHeaderPrefix)) delete headers[name];
  }
}

function requestBody(body: RequestInit['body']): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError('the model client sends only string or byte bodies');
}

/**
 * An abort destroys the request with the signal's reason, as fetch rejects. One listener, removed
 * when the request closes: Node's own `signal` option watches the request's end with several.
 */
function send(transport: Transport, url: URL, method: string, headers: OutgoingHttpHeaders, body: string | Uint8Array | undefined, signal: AbortSignal | undefined): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const request = transport.request(url, { method, headers, agent: transport.agent }, resolve);
    request.on('error', reject);
    if (signal) {
      const onAbort = () => request.destroy(abortReason(signal));
      signal.addEventListener('abort', onAbort, { once: true });
      request.once('close', () => signal.removeEventListener('abort', onAbort));
    }
    request.end(body);
  });
}

/**
 * JSON replies are read whole before the Response is made when the caller asks for it; anything else, event streams above all, stays a stream. An abort while the body is read fails it
 * with an AbortError, as fetch does, so the SDK can tell a timeout from a dropped connection.
 */
async function toResponse(message: IncomingMessage, signal: AbortSignal | undefined, readJsonWhole: boolean): Promise<Response> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(message.headers)) {
    for (const item of [value ?? []].flat()) headers.append(name, item);
  }
  const init: ResponseInit = { status: message.statusCode, statusText: message.statusMessage, headers };
  if (nullBodyStatuses.has(message.statusCode ?? 0)) {
    message.resume();
    return new Response(null, init);
  }
  if (signal) {
    const onAbort = () => message.destroy(abortReason(signal));
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    message.once('close', () => signal.removeEventListener('abort', onAbort));
  }
  const content = await decoded(message, headers);
  if (!readJsonWhole || !isJson(headers.get('content-type'))) return new Response(Readable.toWeb(content) as ReadableStream<Uint8Array>, init);
  return new WholeResponse(await readWhole(content), init);
}

const utf8 = new TextDecoder();

/**
 * A JSON reply read whole: its body methods answer from the bytes. A Response made with the bytes
 * wraps them in a web stream and reads them back through it, which cost more than the rest of the
 * fetch on every model reply; here the stream is made only if `body` is asked for. Each body may be
 * read once, as with fetch.
 */
class WholeResponse extends Response {
  readonly #bytes: Buffer<ArrayBuffer>;
  #used = false;
  #stream: ReadableStream<Uint8Array> | null | undefined;

  constructor(bytes: Buffer<ArrayBuffer>, init: ResponseInit) {
    super(null, init);
    this.#bytes = bytes;
  }

  static {
    // `body` is a data property in the DOM types, so it is replaced on the prototype rather than overridden.
    Object.defineProperty(this.prototype, 'body', {
      get(this: WholeResponse) {
        return (this.#stream ??= new Response(this.#bytes).body);
      },
    });
    Object.defineProperty(this.prototype, 'bodyUsed', {
      get(this: WholeResponse) {
        return this.#used;
      },
    });
  }

  override async text(): Promise<string> {
    // Once the stream was handed out, the body is read from it, as fetch would.
    if (this.#stream !== undefined) return new Response(this.#stream).text();
    return utf8.decode(this.#take());
  }

  override async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = this.#take();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  }

  override async blob(): Promise<Blob> {
    return new Response(this.#take(), { headers: this.headers }).blob();
  }

  override clone(): Response {
    if (this.#used) throw new TypeError('Response.clone: Body has already been consumed.');
    return new WholeResponse(this.#bytes, { status: this.status, statusText: this.statusText, headers: new Headers(this.headers) });
  }

  #take(): Buffer<ArrayBuffer> {
    if (this.#used) throw new TypeError('Body is unusable: Body has already been read');
    this.#used = true;
    return this.#bytes;
  }
}

/** The whole body, read with the stream's events (cheaper than its async iterator, on every model reply). */
function readWhole(content: Readable): Promise<Buffer<ArrayBuffer>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    content.on('data', (chunk: Buffer) => chunks.push(chunk));
    content.once('end', () => resolve(Buffer.concat(chunks)));
    content.once('error', reject);
    // Closed with neither an end nor an error: cut off, as an async iterator would report it.
    content.once('close', () => reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' })));
  });
}

/** `application/json` or a `+json` type; not `application/x-ndjson`, which is read as it arrives. */
function isJson(contentType: string | null): boolean {
  const mediaType = contentType?.split(';')[0].trim().toLowerCase() ?? '';
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

/** The body with its content encoding undone, as fetch hands it over. */
async function decoded(message: IncomingMessage, headers: Headers): Promise<Readable> {
  const encoding = headers.get('content-encoding')?.trim().toLowerCase();
  const decoder = encoding ? decoders[encoding] : undefined;
  if (!decoder) return message;
  headers.delete('content-encoding');
  headers.delete('content-length');
  const zlib = await import('node:zlib');
  const decompress = decoder(zlib);
  message.on('error', (error) => decompress.destroy(error));
  return message.pipe(decompress);
}

/** What fetch fails with on an abort: the signal's reason, or an AbortError when it gave none. */
function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError');
}
