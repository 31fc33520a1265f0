import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { httpFetch } from '../runtime/services/model/http-fetch.js';

interface SeenRequest {
  method: string;
  url: string;
  body: string;
  headers: IncomingMessage['headers'];
}

const servers: Server[] = [];

/** A server on its own port (its own origin) that records each request before handling it. */
async function serve(handler: (request: SeenRequest, response: ServerResponse) => void): Promise<{ base: string; seen: SeenRequest[]; server: Server }> {
  const seen: SeenRequest[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const entry = { method: request.method ?? '', url: request.url ?? '', body, headers: request.headers };
      seen.push(entry);
      handler(entry, response);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('the model client\'s fetch', () => {
  it('sends the method, headers and body, and returns status, headers and body', async () => {
    const { base, seen } = await serve((_request, response) => {
      response.writeHead(201, 'Made', { 'content-type': 'application/json', 'x-request-id': 'abc', 'set-cookie': ['a=1', 'b=2'] });
      response.end('{"ok":true}');
    });
    const response = await httpFetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: new Headers({ 'Content-Type': 'application/json', Authorization: 'Bearer key' }),
      body: '{"model":"m"}',
    });
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/chat/completions', body: '{"model":"m"}' });
    expect(seen[0].headers).toMatchObject({ 'content-type': 'application/json', authorization: 'Bearer key', 'content-length': '13' });
    expect(response.status).toBe(201);
    expect(response.statusText).toBe('Made');
    expect(response.headers.get('x-request-id')).toBe('abc');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await response.json()).toEqual({ ok: true });
  });

  it('reads a JSON reply as fetch does: once, as text, JSON, bytes or a stream, or cloned first', async () => {
    const reply = '\uFEFF{"text":"caf\u00e9 \u2713"}';
    const { base } = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      response.end(reply);
    });
    const read = async (how: (response: Response) => Promise<unknown>) => {
      const [ours, standard] = await Promise.all([httpFetch(`${base}/`), fetch(`${base}/`)]);
      const [mine, theirs] = await Promise.all([how(ours), how(standard)]);
      expect(mine).toEqual(theirs);
      await expect(ours.text()).rejects.toThrow(TypeError);
      return mine;
    };
    expect(await read((response) => response.json())).toEqual({ text: 'café ✓' });
    expect(await read((response) => response.text())).toBe('{"text":"café ✓"}');
    expect(Buffer.from(await read((response) => response.arrayBuffer()) as ArrayBuffer).toString('utf8')).toBe(reply);
    expect(await read(async (response) => (await response.blob()).type)).toBe('application/json;charset=utf-8');
    const once = await httpFetch(`${base}/`);
    expect(once.bodyUsed).toBe(false);
    await once.json();
    expect(once.bodyUsed).toBe(true);
    expect(await read(async (response) => {
      const copy = response.clone();
      return [await copy.json(), await response.text()];
    })).toEqual([{ text: 'café ✓' }, '{"text":"café ✓"}']);
    expect(await read(async (response) => {
      const chunks: Uint8Array[] = [];
      for await (const chunk of response.body!) chunks.push(chunk);
      return Buffer.concat(chunks).toString('utf8');
    })).toBe(reply);
  });

  it('streams an event stream as it arrives', async () => {
    let finish: (() => void) | undefined;
    const { base } = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
      finish = () => response.end('data: second\n\n');
    });
    const response = await httpFetch(base, { method: 'POST', body: '{}' });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    expect(decoder.decode((await reader.read()).value)).toBe('data: first\n\n');
    finish!();
    expect(decoder.decode((await reader.read()).value)).toBe('data: second\n\n');
    expect((await reader.read()).done).toBe(true);
  });

  it('follows redirects as fetch does: 307 keeps the POST, 303 continues as a GET', async () => {
    const { base, seen } = await serve((request, response) => {
      if (request.url === '/start') response.writeHead(307, { location: '/kept' }).end();
      else if (request.url === '/kept') response.writeHead(303, { location: `${base}/done` }).end();
      else response.end(`${request.method} ${request.body}`);
    });
    const response = await httpFetch(`${base}/start`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'payload' });
    expect(seen.map((request) => `${request.method} ${request.url} ${request.body}`)).toEqual(['POST /start payload', 'POST /kept payload', 'GET /done ']);
    expect(seen[2].headers['content-type']).toBeUndefined();
    expect(await response.text()).toBe('GET ');
  });

  it('returns a bodiless response for 204', async () => {
    const { base } = await serve((_request, response) => response.writeHead(204).end());
    const response = await httpFetch(base);
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });

  it('rejects with an AbortError when the signal fires before the reply', async () => {
    const { base } = await serve(() => undefined);
    const controller = new AbortController();
    const pending = httpFetch(base, { method: 'POST', body: '{}', signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('sends nothing when the signal fired before, and rejects with its reason as fetch does', async () => {
    const { base, seen } = await serve((_request, response) => response.end('{}'));
    const reason = new Error('stopped by the user');
    const [ours, standard] = await Promise.allSettled([httpFetch(base, { signal: AbortSignal.abort(reason) }), fetch(base, { signal: AbortSignal.abort(reason) })]);
    expect(ours).toEqual({ status: 'rejected', reason });
    expect(standard).toEqual({ status: 'rejected', reason });
    expect(seen).toEqual([]);
  });

  it('leaves no listener on the signal once the reply is read', async () => {
    const { base } = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"ok":true}');
    });
    const controller = new AbortController();
    const listeners = () => getEventListeners(controller.signal, 'abort').length;
    for (let index = 0; index < 5; index += 1) await (await httpFetch(base, { signal: controller.signal })).json();
    await new Promise((resolve) => setImmediate(resolve));
    expect(listeners()).toBe(0);
  });

  it('rejects with the connection error when nothing listens', async () => {
    const { base, server } = await serve(() => undefined);
    await new Promise((resolve) => server.close(resolve));
    await expect(httpFetch(base)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('rejects when the connection drops in the middle of a body', async () => {
    const { base } = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      response.write('{"partial":');
      setTimeout(() => response.socket?.destroy(), 20);
    });
    await expect(httpFetch(base, { method: 'POST', body: '{}' })).rejects.toThrow();
  });

  it('speaks TLS to https addresses and refuses a certificate no authority signed', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'manus-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-days', '1', '-keyout', join(folder, 'key.pem'), '-out', join(folder, 'cert.pem')], { stdio: 'ignore' });
    const tls = createTlsServer({ key: readFileSync(join(folder, 'key.pem')), cert: readFileSync(join(folder, 'cert.pem')) }, (_request, response) => response.end('secret'));
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    try {
      await expect(httpFetch(`https://127.0.0.1:${(tls.address() as AddressInfo).port}/`)).rejects.toMatchObject({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    } finally {
      tls.closeAllConnections();
      await new Promise((resolve) => tls.close(resolve));
    }
  });

  it('drops credentials and custom headers when a redirect leaves the origin, and keeps them within it', async () => {
    const other = await serve((_request, response) => response.end('elsewhere'));
    const { base, seen } = await serve((request, response) => {
      if (request.url === '/same') response.writeHead(307, { location: '/moved' }).end();
      else if (request.url === '/moved') response.writeHead(307, { location: `${other.base}/away` }).end();
      else response.end('no');
    });
    const response = await httpFetch(`${base}/same`, { method: 'POST', headers: { authorization: 'Bearer key', 'api-key': 'key', 'x-gateway-key': 'key', 'x-stainless-os': 'Linux' }, body: '{}' });
    expect(await response.text()).toBe('elsewhere');
    expect(seen[1].headers).toMatchObject({ authorization: 'Bearer key', 'api-key': 'key', 'x-gateway-key': 'key' });
    expect(other.seen[0].headers.authorization).toBeUndefined();
    expect(other.seen[0].headers['api-key']).toBeUndefined();
    // A profile's headers_env may name any header; none of them follows the redirect away.
    expect(other.seen[0].headers['x-gateway-key']).toBeUndefined();
    expect(other.seen[0].headers['x-stainless-os']).toBe('Linux');
  });

  it('fails on a redirect loop instead of returning the redirect', async () => {
    const { base } = await serve((_request, response) => response.writeHead(302, { location: '/again' }).end());
    await expect(httpFetch(`${base}/again`)).rejects.toThrow(/too many redirects/);
  });

  it('undoes a gzip content encoding', async () => {
    const { base } = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      response.end(gzipSync('{"compressed":true}'));
    });
    const response = await httpFetch(base, { method: 'POST', body: '{}' });
    expect(response.headers.get('content-encoding')).toBeNull();
    expect(await response.json()).toEqual({ compressed: true });
  });

  it('streams any body that is not JSON, and fails it with an AbortError when aborted mid-stream', async () => {
    const { base } = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/x-ndjson' });
      response.write('{"part":1}\n');
    });
    const controller = new AbortController();
    const response = await httpFetch(base, { method: 'POST', body: '{}', signal: controller.signal });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('{"part":1}\n');
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
  });
});
