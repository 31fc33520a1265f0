import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import webFetch from '../plugins/web/web_fetch.js';
import type { ChatMessage, JsonSchema, ToolContext } from '../runtime/contract/tool.js';
import { checkDomainAllowed, readDomainRules } from '../plugins/web/domain-rules.js';
import { splitIntoChunks } from '../plugins/web/text-chunks.js';
import { createTestToolContext } from './support/tool-context.js';
import { createToolNetwork } from '../runtime/services/network/tool-network.js';
import { makeFixture, runCli } from './support/run-cli.js';
import { isPrivateAddress } from '../runtime/services/network/private-addresses.js';

type Route = (request: IncomingMessage, response: ServerResponse) => void;

const routes = new Map<string, Route>();
const requested: string[] = [];
const server = createServer((request, response) => {
  const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
  requested.push(path);
  const route = routes.get(path);
  if (route) route(request, response);
  else response.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not here</h1><p>No page at this address.</p>');
});
let port = 0;
let base = '';

const send = (contentType: string, body: string | Buffer): Route => (_request, response) => {
  response.writeHead(200, { 'content-type': contentType }).end(body);
};

const articlePage = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Opening hours</title></head><body>
  <header><nav><a href="/">Home</a><a href="/shop">Shop</a></nav></header>
  <main><h1>Visiting the museum</h1><p>Open <strong>Tuesday to Sunday</strong>, 10:00 to 18:00. <a href="/tickets">Buy tickets</a>.</p>
  <ul><li>Adults: 12 EUR</li><li>Children: free</li></ul></main>
  <footer>Museum footer text</footer></body></html>`;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  routes.set('/article', send('text/html; charset=utf-8', articlePage));
  routes.set('/latin1', send('text/html; charset=ISO-8859-1', Buffer.from('<html><head><title>Caf\u00e9</title></head><body><main><p>Caf\u00e9 cr\u00e8me \u00e0 Z\u00fcrich, 3 \u00a3</p></main></body></html>', 'latin1')));
  routes.set('/latin1-meta', send('text/html', Buffer.from('<html><head><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"><title>M</title></head><body><main><p>Gr\u00fc\u00dfe aus K\u00f6ln</p></main></body></html>', 'latin1')));
  routes.set('/data.json', send('application/json', '{"name": "museum", "prices": [12, 0]}'));
  routes.set('/notes.txt', send('text/plain; charset=utf-8', 'line one\n  <b>not html</b>\nline three\n'));
  routes.set('/report.pdf', send('application/pdf', Buffer.from('%PDF-1.7\n%binary\n')));
  routes.set('/download', send('application/octet-stream', Buffer.from('%PDF-1.4\n1 0 obj\n')));
  routes.set('/image.png', send('image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0])));
  routes.set('/to-blocked', (_request, response) => response.writeHead(302, { location: `http://localhost:${port}/secret` }).end());
  routes.set('/to-article', (_request, response) => response.writeHead(301, { location: '/article' }).end());
  routes.set('/loop', (_request, response) => response.writeHead(302, { location: '/loop' }).end());
  routes.set('/secret', send('text/plain', 'the secret'));
  routes.set('/never', () => {
    // Never answers: the request must time out.
  });
  routes.set('/huge', (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.write('<html><body><main><p>START-OF-PAGE</p>');
    response.end(`${'<p>filler paragraph text</p>'.repeat(5000)}<p>END-OF-PAGE</p></main></body></html>`);
  });
  routes.set('/long', send('text/html', `<html><body><main>${Array.from({ length: 400 }, (_, index) => `<p>Paragraph ${index}: ${'words '.repeat(20)}</p>`).join('')}</main></body></html>`));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

// The fixture site is on loopback: these tests allow private addresses, as a user would in their configuration.
const privateAllowed = createToolNetwork({ allowPrivate: true });

async function fetchWith(input: { url: string; goal?: string }, overrides: Partial<ToolContext> = {}) {
  const test = createTestToolContext({ network: privateAllowed, ...overrides });
  try {
    const output = await webFetch.execute(input, test.context);
    return { output: typeof output === 'string' ? output : output.content, runDirectory: test.context.runDirectory };
  } finally {
    await test.dispose();
  }
}

async function fetchError(input: { url: string; goal?: string }, overrides: Partial<ToolContext> = {}) {
  try {
    await fetchWith(input, overrides);
  } catch (error) {
    return error as Error & { code: string };
  }
  throw new Error('expected the fetch to fail');
}

describe('web_fetch', () => {
  it('returns the main content of an HTML page as markdown with absolute links', async () => {
    const { output } = await fetchWith({ url: `${base}/article` });
    expect(output).toBe(
      `URL: ${base}/article\nTitle: Opening hours\n\n# Visiting the museum\n\n` +
        `Open **Tuesday to Sunday**, 10:00 to 18:00. [Buy tickets](${base}/tickets).\n\n- Adults: 12 EUR\n- Children: free`,
    );
  });

  it('follows redirects and names where the page was found', async () => {
    const { output } = await fetchWith({ url: `${base}/to-article` });
    expect(output.split('\n')[0]).toBe(`URL: ${base}/article (redirected from ${base}/to-article)`);
  });

  it('decodes a latin-1 page from the Content-Type header or from its <meta> declaration', async () => {
    expect((await fetchWith({ url: `${base}/latin1` })).output).toContain('Caf\u00e9 cr\u00e8me \u00e0 Z\u00fcrich, 3 \u00a3');
    expect((await fetchWith({ url: `${base}/latin1-meta` })).output).toContain('Gr\u00fc\u00dfe aus K\u00f6ln');
  });

  it('passes JSON and plain text through as they are', async () => {
    expect((await fetchWith({ url: `${base}/data.json` })).output).toBe(`URL: ${base}/data.json\n\n{"name": "museum", "prices": [12, 0]}`);
    expect((await fetchWith({ url: `${base}/notes.txt` })).output).toBe(`URL: ${base}/notes.txt\n\nline one\n  <b>not html</b>\nline three\n`);
  });

  it('refuses PDFs (by type or by content) and binary files with a clear message', async () => {
    const pdf = await fetchError({ url: `${base}/report.pdf` });
    expect(pdf.code).toBe('web_unsupported_content');
    expect(pdf.message).toMatch(/is a PDF/);
    expect((await fetchError({ url: `${base}/download` })).message).toMatch(/is a PDF/);
    const image = await fetchError({ url: `${base}/image.png` });
    expect(image.message).toMatch(/not a text document \(image\/png\)/);
  });

  it('refuses a redirect to a blocked domain without requesting it', async () => {
    requested.length = 0;
    const error = await fetchError({ url: `${base}/to-blocked` }, { settings: { blocked_domains: ['localhost'] } });
    expect(error.code).toBe('web_domain_blocked');
    expect(error.message).toContain(`http://localhost:${port}/secret`);
    expect(requested).toEqual(['/to-blocked']);

    const notAllowed = await fetchError({ url: `${base}/to-blocked` }, { settings: { allowed_domains: ['127.0.0.1'] } });
    expect(notAllowed.message).toMatch(/localhost is not in allowed_domains \(127\.0\.0\.1\)/);
    expect((await fetchError({ url: `${base}/article` }, { settings: { allowed_domains: ['example.com'] } })).code).toBe('web_domain_blocked');
  });

  it('matches domain rules on subdomains, not on look-alike names', () => {
    const rules = readDomainRules({ blocked_domains: ['*.Tracker.example', 'https://ads.example.net/path'] });
    expect(() => checkDomainAllowed(new URL('https://cdn.tracker.example/x'), rules)).toThrow(/tracker\.example/);
    expect(() => checkDomainAllowed(new URL('https://tracker.example/'), rules)).toThrow();
    expect(() => checkDomainAllowed(new URL('https://ads.example.net/'), rules)).toThrow();
    expect(() => checkDomainAllowed(new URL('https://nottracker.example/'), rules)).not.toThrow();
    expect(() => checkDomainAllowed(new URL('https://example.net/'), rules)).not.toThrow();
  });

  it('accepts only http and https URLs', async () => {
    expect((await fetchError({ url: 'file:///etc/passwd' })).message).toMatch(/Only http and https URLs can be fetched, not file/);
    expect((await fetchError({ url: 'not a url' })).code).toBe('web_url_invalid');
  });

  it('stops following redirects after max_redirects', async () => {
    const error = await fetchError({ url: `${base}/loop` }, { settings: { max_redirects: 3 } });
    expect(error.code).toBe('web_too_many_redirects');
  });

  it('reports an HTTP error status with the start of the page', async () => {
    const error = await fetchError({ url: `${base}/missing` });
    expect(error.code).toBe('web_http_status');
    expect(error.message).toContain('HTTP 404: # Not here');
  });

  it('reads only the first max_bytes of a large page and says so', async () => {
    const { output } = await fetchWith({ url: `${base}/huge` }, { settings: { max_bytes: 2_000 } });
    expect(output).toContain('(The page is larger than 2000 bytes; only its start was read.)');
    expect(output).toContain('START-OF-PAGE');
    expect(output).not.toContain('END-OF-PAGE');
  });

  it('gives up on a server that never answers after timeout_ms', async () => {
    const started = performance.now();
    const error = await fetchError({ url: `${base}/never` }, { settings: { timeout_ms: 300 } });
    expect(error.code).toBe('web_timeout');
    expect(error.message).toContain('did not answer within 0.3 s');
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('keeps head and tail of a long page within max_characters and saves the full text in the run folder', async () => {
    const { output, runDirectory } = await fetchWith({ url: `${base}/long` }, { settings: { max_characters: 2_000 } });
    expect(output.length).toBeLessThanOrEqual(2_000);
    expect(output).toContain('Paragraph 0:');
    expect(output).toContain('Paragraph 399:');
    const [saved] = readdirSync(join(runDirectory, 'outputs'));
    expect(output).toContain(join(runDirectory, 'outputs', saved));
    const full = readFileSync(join(runDirectory, 'outputs', saved), 'utf8');
    expect(full).toContain('Paragraph 200:');
  });
});

interface RecordedCompletion {
  messages: ChatMessage[];
  responseSchema?: JsonSchema;
}

function recordingModel(answer: (prompt: string, call: number) => string) {
  const calls: RecordedCompletion[] = [];
  return {
    calls,
    model: {
      complete: async (messages: ChatMessage[], options?: { responseSchema?: JsonSchema }) => {
        calls.push({ messages, responseSchema: options?.responseSchema });
        const prompt = messages.map((message) => (typeof message.content === 'string' ? message.content : '')).join('\n');
        return answer(prompt, calls.length);
      },
    },
  };
}

describe('web_fetch with a goal', () => {
  it('asks the model to extract what the goal names from the page, with a response schema', async () => {
    const recorder = recordingModel(() => JSON.stringify({ relevant: true, extraction: 'Open Tuesday to Sunday, 10:00 to 18:00.' }));
    const { output } = await fetchWith({ url: `${base}/article`, goal: 'the opening hours' }, { model: recorder.model });
    expect(output).toBe(`Extracted from ${base}/article for the goal "the opening hours":\n\nOpen Tuesday to Sunday, 10:00 to 18:00.`);
    expect(recorder.calls).toHaveLength(1);
    const prompt = recorder.calls[0].messages.at(-1)!.content as string;
    expect(prompt).toContain('Goal: the opening hours');
    expect(prompt).toContain('Open **Tuesday to Sunday**, 10:00 to 18:00.');
    expect(prompt).not.toContain('Museum footer text');
    expect(recorder.calls[0].responseSchema).toMatchObject({ required: ['relevant', 'extraction'] });
  });

  it('reads a long page in parts and merges what the relevant parts found', async () => {
    const recorder = recordingModel((prompt) => {
      if (prompt.includes('<finding part=')) return '```json\n{"extraction": "Paragraph 10 and paragraph 300 were found."}\n```';
      const found = ['Paragraph 10:', 'Paragraph 300:'].find((marker) => prompt.includes(marker));
      return JSON.stringify(found ? { relevant: true, extraction: `found ${found}` } : { relevant: false, extraction: '' });
    });
    const { output } = await fetchWith(
      { url: `${base}/long`, goal: 'paragraphs 10 and 300' },
      { model: recorder.model, settings: { extract_chunk_characters: 5_000, extract_max_chunks: 20 } },
    );
    const partCalls = recorder.calls.filter((call) => (call.messages.at(-1)!.content as string).includes('<page>'));
    expect(partCalls.length).toBeGreaterThan(5);
    for (const call of partCalls) {
      const part = /<page>\n([\s\S]*)\n<\/page>/.exec(call.messages.at(-1)!.content as string)![1];
      expect(part.length).toBeLessThanOrEqual(5_000);
    }
    const merge = recorder.calls.at(-1)!.messages.at(-1)!.content as string;
    expect(merge).toContain('found Paragraph 10:');
    expect(merge).toContain('found Paragraph 300:');
    expect(recorder.calls).toHaveLength(partCalls.length + 1);
    expect(output).toContain('Paragraph 10 and paragraph 300 were found.');
  });

  it('reads at most extract_max_chunks parts and says how much of the page it read', async () => {
    const recorder = recordingModel(() => 'Nothing about that here.');
    const { output } = await fetchWith(
      { url: `${base}/long`, goal: 'anything' },
      { model: recorder.model, settings: { extract_chunk_characters: 5_000, extract_max_chunks: 2 } },
    );
    expect(recorder.calls).toHaveLength(3);
    expect(output).toMatch(/Only the first 2 of \d+ parts of the page were read/);
  });
});

describe('splitting text into parts', () => {
  it('cuts between paragraphs, then lines, then words, and never splits a surrogate pair', () => {
    expect(splitIntoChunks('aaaa\n\nbbbb\n\ncccc', 10)).toEqual(['aaaa\n\nbbbb', 'cccc']);
    expect(splitIntoChunks('one two three four', 9)).toEqual(['one two', 'three', 'four']);
    const emoji = '\u{1F600}'.repeat(10);
    const parts = splitIntoChunks(emoji, 5);
    expect(parts.join('')).toBe(emoji);
    for (const part of parts) expect(part).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
  });
});

/** A server on one loopback address, recording the paths asked for. */
async function startServer(host: string, route: Route, port = 0) {
  const paths: string[] = [];
  const listener = createServer((request, response) => {
    paths.push(request.url ?? '');
    route(request, response);
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(port, host, resolve);
  });
  return {
    paths,
    port: (listener.address() as AddressInfo).port,
    close: () => new Promise((resolve) => { listener.closeAllConnections(); listener.close(resolve); }),
  };
}

describe('web_fetch and private addresses', () => {
  const defaults = { network: createToolNetwork() };
  const environmentBefore = { hosts: process.env.MANUS_TEST_HOSTS, publicAddresses: process.env.MANUS_TEST_PUBLIC_ADDRESSES };
  // 127.0.0.2 stands for a public server; names are mapped without DNS. Both variables are test-only.
  beforeAll(() => {
    process.env.MANUS_TEST_PUBLIC_ADDRESSES = '127.0.0.2';
    process.env.MANUS_TEST_HOSTS = 'internal.test=127.0.0.1;mixed.test=127.0.0.2,127.0.0.1;public.test=127.0.0.2;rebind.test=127.0.0.2|127.0.0.1';
  });
  afterAll(() => {
    for (const [name, value] of [['MANUS_TEST_HOSTS', environmentBefore.hosts], ['MANUS_TEST_PUBLIC_ADDRESSES', environmentBefore.publicAddresses]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('refuses loopback under the defaults, in every spelling, without sending a request', async () => {
    requested.length = 0;
    const spellings = [
      `${base}/secret`,
      `http://2130706433:${port}/secret`,
      `http://0177.0.0.1:${port}/secret`,
      `http://0x7f.1:${port}/secret`,
      `http://127.1:${port}/secret`,
      `http://localhost:${port}/secret`,
      `http://localhost.:${port}/secret`,
      `http://LOCALHOST.:${port}/secret`,
      `http://app.localhost:${port}/secret`,
      `http://[::1]:${port}/secret`,
      `http://[::ffff:127.0.0.1]:${port}/secret`,
      `http://[::ffff:7f00:1]:${port}/secret`,
      `http://0.0.0.0:${port}/secret`,
      `http://internal.test:${port}/secret`,
      `http://mixed.test:${port}/secret`,
    ];
    for (const url of spellings) {
      const error = await fetchError({ url }, defaults);
      expect({ url, code: error.code }).toEqual({ url, code: 'web_private_address' });
      expect(error.message).toMatch(/network\.allow_private/);
    }
    expect(requested).toEqual([]);
  });

  it('refuses the metadata address and private networks before connecting', async () => {
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/', 'http://192.168.1.1/', 'http://172.16.0.1/', 'http://100.64.0.1/', 'http://[fd00::1]/', 'http://[fe80::1]/']) {
      expect((await fetchError({ url }, defaults)).code).toBe('web_private_address');
    }
  });

  it('refuses a redirect from a public server to loopback, a private name or the metadata address', async () => {
    const targets = [`${base}/secret`, `http://internal.test:${port}/secret`, 'http://169.254.169.254/latest/meta-data/', `http://[::ffff:127.0.0.1]:${port}/secret`];
    let next = 0;
    const publicServer = await startServer('127.0.0.2', (_request, response) => response.writeHead(302, { location: targets[next] }).end());
    try {
      requested.length = 0;
      for (next = 0; next < targets.length; next++) {
        const error = await fetchError({ url: `http://public.test:${publicServer.port}/start` }, defaults);
        expect(error.code).toBe('web_private_address');
      }
      expect(publicServer.paths).toEqual(['/start', '/start', '/start', '/start']);
      expect(requested).toEqual([]);
    } finally {
      await publicServer.close();
    }
  });

  it('connects to the very address it checked, so a second DNS answer cannot rebind the name to loopback', async () => {
    const publicServer = await startServer('127.0.0.2', send('text/plain', 'public page'));
    const attacker = await startServer('127.0.0.1', send('text/plain', 'internal secret'), publicServer.port);
    try {
      // The first lookup answers 127.0.0.2, every later one 127.0.0.1: a check made with one lookup
      // and a connection made with another would reach the attacker's loopback server.
      const { output } = await fetchWith({ url: `http://rebind.test:${publicServer.port}/page` }, defaults);
      expect(output).toContain('public page');
      await fetchError({ url: `http://rebind.test:${publicServer.port}/again` }, defaults).catch(() => undefined);
      expect(attacker.paths).toEqual([]);
    } finally {
      await publicServer.close();
      await attacker.close();
    }
  });

  it('takes network.allow_private from the user\'s configuration only, never from a recipe', async () => {
    const folder = makeFixture({ 'recipe.yaml': 'version: 1\nname: t\nprompt: go\nnetwork:\n  allow_private: true\nagent:\n  tools: [web_fetch, terminate]\n' });
    const checked = await runCli(['validate', 'recipe.yaml'], { cwd: folder });
    expect(checked.exitCode).toBe(2);
    expect(checked.stderr).toMatch(/recipe\.yaml:4:1: error: .*network/);
  });

  it('reaches loopback when the user allows private addresses', async () => {
    expect((await fetchWith({ url: `${base}/secret` }, { network: createToolNetwork({ allowPrivate: true }) })).output).toContain('the secret');
  });

  it('classifies addresses, IPv6 forms carrying an IPv4 address included', () => {
    const privateOnes = ['127.0.0.1', '127.255.255.254', '0.0.0.0', '10.1.2.3', '172.31.0.1', '192.168.0.1', '100.64.0.1', '169.254.169.254', '192.0.0.8', '198.18.0.1', '224.0.0.1', '240.0.0.1', '255.255.255.255',
      '::1', '::', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '::127.0.0.1', '64:ff9b::127.0.0.1', '64:ff9b::a9fe:a9fe', '2002:7f00:1::', '2002:c0a8:101::1', 'not-an-address'];
    const publicOnes = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'];
    for (const address of privateOnes) expect({ address, private: isPrivateAddress(address) }).toEqual({ address, private: true });
    for (const address of publicOnes) expect({ address, private: isPrivateAddress(address) }).toEqual({ address, private: false });
  });
});
