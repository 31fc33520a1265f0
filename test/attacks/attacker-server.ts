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
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly url: string;
  readonly requests: AttackerRequest[];
  /** Every request as one text (method, URL, headers, body), for detectors that look for a secret. */
  receivedText(): string;
  close(): Promise<void>;
}

export async function startAttackerServer(): Promise<AttackerServer> {
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
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
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
