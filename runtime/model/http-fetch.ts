/**
 * The `fetch` the model SDK sends its requests through, over node:http. The SDK needs a request
 * out and a standard Response back; Node's own fetch spends most of a millisecond per request on
 * what a model call does not use (request cloning, stream plumbing), and that was most of the
 * runtime's own time per step. Event streams stay streams; other bodies are read whole.
 */
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders, type RequestOptions } from 'node:http';
import type * as Https from 'node:https';
import { Readable } from 'node:stream';

// Idle connections close after 4 s, as Node's fetch does, so a request rarely meets a connection
// the server has just closed.
const idleTimeoutMs = 4000;
const httpAgent = new HttpAgent({ keepAlive: true, timeout: idleTimeoutMs });

interface Transport {
  agent: HttpAgent;
  request(url: URL, options: RequestOptions, onResponse: (message: IncomingMessage) => void): ClientRequest;
}

const http: Transport = { agent: httpAgent, request: httpRequest };
// TLS is loaded when a URL first needs it: a local model server never does.
let https: Promise<Transport> | undefined;

function transportFor(url: URL): Transport | Promise<Transport> {
  if (url.protocol !== 'https:') return http;
  https ??= import('node:https').then((module: typeof Https) => ({
    agent: new module.Agent({ keepAlive: true, timeout: idleTimeoutMs }),
    request: module.request,
  }));
  return https;
}
const redirectStatuses = new Set([301, 302, 303, 307, 308]);
const nullBodyStatuses = new Set([101, 204, 205, 304]);
const maxRedirects = 5;

export async function httpFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  let url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  let method = (init.method ?? 'GET').toUpperCase();
  let body = requestBody(init.body);
  const headers: OutgoingHttpHeaders = Object.fromEntries(new Headers(init.headers));
  for (let redirects = 0; ; redirects += 1) {
    const message = await send(url, method, headers, body, init.signal ?? undefined);
    const location = message.headers.location;
    if (!redirectStatuses.has(message.statusCode ?? 0) || !location || init.redirect === 'manual' || redirects === maxRedirects) {
      return toResponse(message);
    }
    message.resume();
    url = new URL(location, url);
    // As fetch does: 303, and 301 or 302 after a POST, continue as a GET without the body.
    if (message.statusCode === 303 || (method === 'POST' && (message.statusCode === 301 || message.statusCode === 302))) {
      method = 'GET';
      body = undefined;
      delete headers['content-type'];
      delete headers['content-length'];
    }
  }
}

function requestBody(body: RequestInit['body']): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError('the model client sends only string or byte bodies');
}

async function send(url: URL, method: string, headers: OutgoingHttpHeaders, body: string | Uint8Array | undefined, signal: AbortSignal | undefined): Promise<IncomingMessage> {
  const transport = await transportFor(url);
  return new Promise((resolve, reject) => {
    const request = transport.request(url, { method, headers, agent: transport.agent, signal }, resolve);
    request.on('error', reject);
    request.end(body);
  });
}

async function toResponse(message: IncomingMessage): Promise<Response> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(message.headers)) {
    for (const item of [value ?? []].flat()) headers.append(name, item);
  }
  const init: ResponseInit = { status: message.statusCode, statusText: message.statusMessage, headers };
  if (nullBodyStatuses.has(message.statusCode ?? 0)) {
    message.resume();
    return new Response(null, init);
  }
  if (headers.get('content-type')?.startsWith('text/event-stream')) {
    return new Response(Readable.toWeb(message) as ReadableStream<Uint8Array>, init);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of message) chunks.push(chunk as Buffer);
  return new Response(Buffer.concat(chunks), init);
}
