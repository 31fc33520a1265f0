/**
 * `tool_settings.computer.watch`: a page on loopback that shows the desktop's screen, reloaded
 * every second, while the run goes on; no VNC server is needed. The address holds a random token,
 * so another user of the machine cannot look at the screen by trying ports, and the Host header
 * must name loopback, so a web page cannot read it through DNS rebinding.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const host = '127.0.0.1';

export interface ScreenWatch {
  url: string;
  close(): Promise<void>;
}

export async function startScreenWatch(picture: () => Buffer | undefined, refreshSeconds: number): Promise<ScreenWatch> {
  const token = randomBytes(16).toString('hex');
  let port = 0;
  const server = createServer((request, response) => {
    const hostHeader = request.headers.host ?? '';
    if (hostHeader !== `${host}:${port}` && hostHeader !== `localhost:${port}`) return send(response, 403, 'text/plain', 'Refused: the Host header does not name loopback.');
    if (request.method !== 'GET' && request.method !== 'HEAD') return send(response, 405, 'text/plain', 'GET only.');
    const path = new URL(request.url ?? '/', `http://${host}`).pathname;
    if (path === `/${token}/`) return send(response, 200, 'text/html; charset=utf-8', screenPage(refreshSeconds));
    if (path === `/${token}/screen.png`) {
      const png = picture();
      return png ? send(response, 200, 'image/png', png) : send(response, 404, 'text/plain', 'No screenshot yet.');
    }
    send(response, 404, 'text/plain', 'Not found.');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}/${token}/`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function send(response: ServerResponse, status: number, type: string, body: string | Buffer): void {
  response.writeHead(status, {
    'content-type': type,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; img-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'",
  });
  response.end(body);
}

/** The screen, fetched again every interval; a failed fetch keeps the last picture. */
export function screenPage(refreshSeconds: number): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Desktop screen</title>
<style>body{margin:0;background:#222;color:#ddd;font:14px sans-serif}p{margin:6px 10px}img{display:block;max-width:100%;margin:0 auto;image-rendering:pixelated}</style>
</head><body><p id="state">The desktop's screen, every ${refreshSeconds} s.</p><img id="screen" alt="The desktop's screen" src="screen.png">
<script>
const image = document.getElementById('screen');
const state = document.getElementById('state');
setInterval(() => {
  const next = new Image();
  next.onload = () => { image.src = next.src; state.textContent = 'The desktop at ' + new Date().toLocaleTimeString(); };
  next.onerror = () => { state.textContent = 'No new screenshot: the run may have ended.'; };
  next.src = 'screen.png?t=' + Date.now();
}, ${Math.round(refreshSeconds * 1000)});
</script></body></html>
`;
}
