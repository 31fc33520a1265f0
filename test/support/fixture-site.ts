/**
 * A local web site for browser and web tests: static files from test/fixtures/site/ plus a few
 * dynamic routes, served on 127.0.0.1 on a free port. No test needs the internet.
 *
 *   const site = await startFixtureSite();
 *   await page.goto(`${site.origin}/form.html`);
 *   await site.close();
 *
 * Dynamic routes:
 *   /search?q=...          a results page: links with class "result" to the fixture pages
 *   /echo                  any method: a page listing the method, query and form fields received
 *   /redirect?to=URL       302 to URL (absolute, or relative to the site)
 *   /status/CODE           answers with that HTTP status and a short page
 *   /delay?ms=N            answers after N milliseconds
 *   /hang                  sends the start of a page and never finishes it
 *   /download/NAME         a small file with Content-Disposition: attachment
 *   /link?href=URL&target=T&text=T   a page with one link, for links to other hosts and tabs
 *   /headers               the request headers as JSON
 *   /searxng/search?q=...  the same results as /search, as a SearXNG JSON API answers
 * `routes` adds or replaces dynamic routes by exact path.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';

export type FixtureRoute = (request: IncomingMessage, response: ServerResponse, url: URL) => void | Promise<void>;

export interface FixtureSiteOptions {
  routes?: Record<string, FixtureRoute>;
}

export interface FixtureSite {
  /** `http://127.0.0.1:PORT`, without a trailing slash. */
  origin: string;
  port: number;
  close(): Promise<void>;
}

export const fixtureSiteFolder = fileURLToPath(new URL('../fixtures/site/', import.meta.url));

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

const searchResults = [
  { path: '/article.html', title: 'Glass frogs of the cloud forest', snippet: 'Translucent skin, night calls and the males that guard the eggs.' },
  { path: '/form.html', title: 'Field trip sign-up form', snippet: 'Register for the guided night walk.' },
  { path: '/tabs.html', title: 'Reading list', snippet: 'Further reading, opened in new tabs.' },
];

const builtInRoutes: Record<string, FixtureRoute> = {
  '/search': (_request, response, url) => {
    const query = url.searchParams.get('q') ?? '';
    const items = searchResults
      .map((result) => `<li><a class="result" href="${result.path}">${result.title}</a><p>${result.snippet}</p></li>`)
      .join('\n');
    sendHtml(response, 200, `Search: ${query}`, `<h1>Results for ${escapeHtml(query)}</h1>\n<ol>\n${items}\n</ol>`);
  },
  '/searxng/search': (request, response, url) => {
    const origin = `http://${request.headers.host}`;
    const results = searchResults.map((result) => ({ url: origin + result.path, title: result.title, content: result.snippet }));
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    response.end(JSON.stringify({ query: url.searchParams.get('q') ?? '', results }));
  },
  '/echo': async (request, response, url) => {
    const body = await readBody(request);
    const fields = new URLSearchParams(body);
    const rows = [...url.searchParams, ...fields]
      .map(([name, value]) => `<li><b>${escapeHtml(name)}</b>: <span class="value">${escapeHtml(value)}</span></li>`)
      .join('\n');
    sendHtml(response, 200, 'Received', `<h1>Received (${request.method})</h1>\n<ul id="fields">\n${rows}\n</ul>`);
  },
  '/redirect': (_request, response, url) => {
    response.writeHead(302, { location: url.searchParams.get('to') ?? '/' });
    response.end();
  },
  '/delay': async (_request, response, url) => {
    const milliseconds = Number(url.searchParams.get('ms') ?? 0);
    await new Promise((resolve) => setTimeout(resolve, milliseconds));
    sendHtml(response, 200, 'Delayed', `<p>Answered after ${milliseconds} ms.</p>`);
  },
  '/hang': (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.write('<!doctype html><html><head><title>Still loading</title></head><body><p>The first part of a page that never finishes.</p>');
  },
  '/link': (_request, response, url) => {
    const href = url.searchParams.get('href') ?? '/';
    const target = url.searchParams.get('target');
    const text = url.searchParams.get('text') ?? 'Follow the link';
    const targetAttribute = target ? ` target="${escapeHtml(target)}"` : '';
    sendHtml(response, 200, 'A link', `<a id="the-link" href="${escapeHtml(href)}"${targetAttribute}>${escapeHtml(text)}</a>`);
  },
  '/headers': (request, response) => {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    response.end(JSON.stringify(request.headers));
  },
};

export async function startFixtureSite(options: FixtureSiteOptions = {}): Promise<FixtureSite> {
  const routes = { ...builtInRoutes, ...options.routes };
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fixture.invalid');
    handle(routes, request, response, url).catch((error: unknown) => {
      if (!response.headersSent) sendHtml(response, 500, 'Error', `<pre>${escapeHtml(String(error))}</pre>`);
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        // /hang and keep-alive connections would hold close() open forever.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function handle(routes: Record<string, FixtureRoute>, request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> {
  const route = routes[url.pathname];
  if (route) return route(request, response, url);
  const status = /^\/status\/(\d{3})$/.exec(url.pathname);
  if (status) return sendHtml(response, Number(status[1]), `Status ${status[1]}`, `<p>This page answers with status ${status[1]}.</p>`);
  const download = /^\/download\/([\w.-]+)$/.exec(url.pathname);
  if (download) return sendDownload(response, download[1]);
  return sendStatic(response, url.pathname);
}

async function sendStatic(response: ServerResponse, pathname: string): Promise<void> {
  const relativePath = normalize(decodeURIComponent(pathname === '/' ? '/index.html' : pathname)).replace(/^[/\\]+/, '');
  const file = join(fixtureSiteFolder, relativePath);
  if (!file.startsWith(fixtureSiteFolder) || relativePath.split(sep).includes('..')) {
    return sendHtml(response, 403, 'Forbidden', '<p>Outside the site.</p>');
  }
  let content: Buffer;
  try {
    content = await readFile(file);
  } catch {
    return sendHtml(response, 404, 'Not found', `<p>No page at ${escapeHtml(pathname)}.</p>`);
  }
  response.writeHead(200, { 'content-type': contentTypes[extname(file)] ?? 'application/octet-stream' });
  response.end(content);
}

function sendDownload(response: ServerResponse, name: string): void {
  const content = name.endsWith('.csv') ? 'species,calls_per_minute\nglass frog,42\ntree frog,17\n' : `The file ${name}.\n`;
  response.writeHead(200, {
    'content-type': name.endsWith('.csv') ? 'text/csv' : 'application/octet-stream',
    'content-disposition': `attachment; filename="${name}"`,
  });
  response.end(content);
}

function sendHtml(response: ServerResponse, status: number, title: string, body: string): void {
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  response.end(`<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`);
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => resolve(body));
    request.on('error', reject);
  });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** The fixture site for the calling test file: started before its tests, closed after them. */
export function useFixtureSite(): Pick<FixtureSite, 'origin' | 'port'> {
  let site: FixtureSite | undefined;
  beforeAll(async () => {
    site = await startFixtureSite();
  });
  afterAll(() => site?.close());
  return {
    get origin() {
      return site!.origin;
    },
    get port() {
      return site!.port;
    },
  };
}

export const chromiumPath = process.env.MANUS_CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Whether the browser tests can run; when not, says so once, naming the area skipped. */
export function chromiumMissing(area: string): boolean {
  const missing = !existsSync(chromiumPath);
  if (missing) console.warn(`${area} tests skipped: no Chromium at ${chromiumPath} (set MANUS_CHROMIUM_PATH)`);
  return missing;
}
