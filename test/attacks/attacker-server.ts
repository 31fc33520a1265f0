import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AttackerRequest {
  method: string;
  /** The path and query as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** The attacker's collection point: answers every request with 200 "ok" and keeps it. */
export interface AttackerServer {
  /** `http://127.0.0.1:<port>` (or the address or host name it was given), without a trailing slash. */
  readonly url: string;
  readonly requests: AttackerRequest[];
  /** Every request as one text (method, URL, headers, body), for detectors that look for a secret. */
  receivedText(): string;
  close(): Promise<void>;
}

export interface AttackerServerOptions {
  /** The loopback address to listen on; 127.0.0.1 unless told. */
  address?: string;
  /** The host name the server's `url` uses instead of the address (mapped by `MANUS_TEST_HOSTS`). */
  hostName?: string;
  /** The body of every 200 answer; "ok" unless told. */
  page?: { contentType: string; body: string };
}

/**
 * Besides answering "ok", `/redirect?to=<url>` answers 302 to that URL, so a case can build a
 * redirect chain through the attacker's server.
 */
export async function startAttackerServer(options: AttackerServerOptions = {}): Promise<AttackerServer> {
  const address = options.address ?? '127.0.0.1';
  const requests: AttackerRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const target = new URL(request.url ?? '/', 'http://attacker');
      const redirect = target.pathname === '/redirect' ? target.searchParams.get('to') : null;
      if (redirect) {
        response.writeHead(302, { location: redirect });
        response.end();
        return;
      }
      response.writeHead(200, { 'content-type': options.page?.contentType ?? 'text/plain' });
      response.end(options.page?.body ?? 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.hostName ?? address}:${port}`,
    requests,
    receivedText: () =>
      requests.map((request) => `${request.method} ${request.url}\n${JSON.stringify(request.headers)}\n${request.body}`).join('\n'),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
