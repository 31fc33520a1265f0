import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import webSearch from '../plugins/web/web_search.js';
import { searchWeb, type SearchOptions } from '../plugins/web/search-web.js';
import type { WebSearchError } from '../plugins/web/web-errors.js';
import { makeFixture, privateNetworkConfigHome, readEvents, runCli } from './support/run-cli.js';
import { startScriptedModelServer, type RecordedChatRequest } from './support/scripted-model-server.js';
import { toolMessages } from './support/loop-fixture.js';
import { createTestToolContext } from './support/tool-context.js';
import { createToolNetwork } from '../runtime/services/network/tool-network.js';

// The engines' fixture servers are on loopback: allowed, as a user would in their configuration.
const privateAllowed = createToolNetwork({ allowPrivate: true });

const fixture = (name: string) => readFileSync(new URL(`./fixtures/search/${name}`, import.meta.url), 'utf8');

interface RecordedSearchRequest {
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
  receivedAt: number;
}

type Route = (request: IncomingMessage, response: ServerResponse, body: string) => void;

const routes = new Map<string, Route>();
const recorded: RecordedSearchRequest[] = [];
const server = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => (body += chunk));
  request.on('end', () => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    recorded.push({ path: url.pathname, query: url.searchParams, headers: request.headers, body, receivedAt: performance.now() });
    const route = routes.get(url.pathname);
    if (route) route(request, response, body);
    else response.writeHead(404, { 'content-type': 'text/plain' }).end('no such route');
  });
});
let base = '';
let port = 0;

const html = (content: string): Route => (_request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(content);
const json = (content: string): Route => (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(content);
const status = (code: number): Route => (_request, response) => response.writeHead(code, { 'content-type': 'text/html' }).end(`<h1>Error ${code}</h1>`);
const requestsTo = (path: string) => recorded.filter((request) => request.path === path);

const engineNames = ['duckduckgo', 'bing', 'google', 'baidu', 'brave', 'tavily', 'searxng'];
const endpoints = () => Object.fromEntries(engineNames.map((name) => [name, `${base}/${name}`]));

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  routes.clear();
  recorded.length = 0;
});

async function search(query: string, settings: Record<string, unknown>, options: Omit<SearchOptions, 'settings'> = {}) {
  const test = createTestToolContext({ network: privateAllowed, settings: { endpoints: endpoints(), retry_delay_ms: 5, ...settings } });
  try {
    return await searchWeb(query, { environment: {}, ...options }, test.context);
  } finally {
    await test.dispose();
  }
}

async function searchFailure(query: string, settings: Record<string, unknown>, options: Omit<SearchOptions, 'settings'> = {}) {
  try {
    await search(query, settings, options);
  } catch (error) {
    return error as WebSearchError;
  }
  throw new Error('expected the search to fail');
}

const rustBook = 'https://doc.rust-lang.org/book/ch04-02-references-and-borrowing.html';

describe('parsing each engine', () => {
  it('DuckDuckGo: unwraps uddg= links, skips ads, drops a duplicate of a page and sends kl', async () => {
    routes.set('/duckduckgo', html(fixture('duckduckgo.html')));
    const outcome = await search('rust borrow checker', { engines: ['duckduckgo'] }, { lang: 'en', country: 'gb', numResults: 10 });
    expect(outcome.engine).toBe('duckduckgo');
    expect(outcome.failures).toEqual([]);
    expect(outcome.results).toEqual([
      {
        title: 'References and Borrowing - The Rust Programming Language',
        url: rustBook,
        snippet: 'The borrow checker enforces that references are always valid: at any time you can have either one mutable reference or any number of immutable references.',
      },
      {
        title: 'The Borrow Checker, Explained with Diagrams',
        url: 'https://blog.example.org/posts/borrow-checker-explained?lang=en&ref=ddg',
        snippet: "A visual walk through lifetimes, moves and the borrow checker's error messages.",
      },
      {
        title: 'cannot borrow as mutable because it is also borrowed as immutable',
        url: 'https://stackoverflow.example/questions/12345/cannot-borrow-as-mutable',
        snippet: 'Error E0502 happens when you hold an immutable reference while asking for a mutable one.',
      },
    ]);
    const [request] = requestsTo('/duckduckgo');
    expect(request.query.get('q')).toBe('rust borrow checker');
    expect(request.query.get('kl')).toBe('uk-en');
    expect(request.headers['accept-language']).toBe('en-GB,en;q=0.9');
    expect(request.headers['user-agent']).toMatch(/^Mozilla\/5\.0/);
  });

  it('Bing: decodes ck/a?u= base64 links and sends count, setlang and cc', async () => {
    routes.set('/bing', html(fixture('bing.html')));
    const outcome = await search('rust borrow checker', { engines: ['bing'] }, { lang: 'de', country: 'at', numResults: 7 });
    expect(outcome.results.map((result) => result.url)).toEqual([
      rustBook,
      'https://rustc-dev-guide.rust-lang.org/borrow_check.html',
      'https://users.rust-lang.org/t/understanding-the-borrow-checker/1234',
    ]);
    expect(outcome.results[0].snippet).toBe('The borrow checker compares scopes to determine whether all borrows are valid.');
    expect(outcome.results[1].snippet).toBe('The borrow check is Rust\'s "secret sauce" \u2013 it is tasked with enforcing a number of properties.');
    const [request] = requestsTo('/bing');
    expect(Object.fromEntries(request.query)).toMatchObject({ q: 'rust borrow checker', count: '7', setlang: 'de', cc: 'AT' });
  });

  it('Google: unwraps /url?q= links, skips links back into Google and sends num, hl and gl', async () => {
    routes.set('/google', html(fixture('google.html')));
    const outcome = await search('rust borrow checker', { engines: ['google'] }, { lang: 'fr-CA' });
    expect(outcome.results).toEqual([
      {
        title: 'References and Borrowing - The Rust Programming Language',
        url: rustBook,
        snippet: 'A reference is like a pointer: an address we can follow to access the data stored there; the borrow checker ensures it is always valid.',
      },
      {
        title: 'The Borrow Checker, Explained with Diagrams',
        url: 'https://blog.example.org/posts/borrow-checker-explained?lang=en',
        snippet: "A visual walk through lifetimes, moves and the borrow checker's error messages.",
      },
      {
        title: 'Understanding the borrow checker - Rust Users Forum',
        url: 'https://users.rust-lang.org/t/understanding-the-borrow-checker/1234',
        snippet: 'I keep fighting the borrow checker when I store references in a struct.',
      },
    ]);
    const [request] = requestsTo('/google');
    expect(Object.fromEntries(request.query)).toMatchObject({ q: 'rust borrow checker', num: '5', hl: 'fr', gl: 'ca' });
  });

  it('Baidu: takes the destination from the mu attribute and sends wd and rn', async () => {
    routes.set('/baidu', html(fixture('baidu.html')));
    const outcome = await search('rust 借用检查', { engines: ['baidu'] }, { numResults: 3, lang: 'zh' });
    expect(outcome.results).toEqual([
      {
        title: '引用与借用 - Rust 程序设计语言 简体中文版',
        url: 'https://kaisery.github.io/trpl-zh-cn/ch04-02-references-and-borrowing.html',
        snippet: '借用检查器确保引用总是有效的：在任意给定时间，要么只能有一个可变引用，要么只能有多个不可变引用。',
      },
      { title: '深入理解 Rust 借用检查器', url: 'https://zhuanlan.example.cn/p/123456', snippet: '本文通过示例解释生命周期与借用检查器的工作方式。' },
      { title: 'Rust 借用规则速查', url: 'https://www.example.com.cn/rust/borrow.html', snippet: '可变借用与不可变借用不能同时存在。' },
    ]);
    const [request] = requestsTo('/baidu');
    expect(Object.fromEntries(request.query)).toMatchObject({ wd: 'rust 借用检查', rn: '3' });
    expect(request.headers['accept-language']).toBe('zh');
  });

  it('Brave: sends the key header, count, country and search_lang, and strips markup from descriptions', async () => {
    routes.set('/brave', json(fixture('brave.json')));
    const outcome = await search('rust borrow checker', { engines: ['brave'] }, { lang: 'en', country: 'us', environment: { BRAVE_API_KEY: 'brave-key' } });
    expect(outcome.results).toEqual([
      { title: 'References and Borrowing - The Rust Programming Language', url: rustBook, snippet: 'The borrow checker makes sure references are always valid.' },
      { title: 'MIR borrow check - Rust Compiler Development Guide', url: 'https://rustc-dev-guide.rust-lang.org/borrow_check.html', snippet: 'The borrow check is Rust\'s "secret sauce".' },
    ]);
    const [request] = requestsTo('/brave');
    expect(request.headers['x-subscription-token']).toBe('brave-key');
    expect(Object.fromEntries(request.query)).toMatchObject({ q: 'rust borrow checker', count: '5', country: 'US', search_lang: 'en' });
  });

  it('Tavily: posts the query with a bearer key and the country by name', async () => {
    routes.set('/tavily', json(fixture('tavily.json')));
    const outcome = await search('rust borrow checker', { engines: ['tavily'] }, { country: 'us', numResults: 4, environment: { TAVILY_API_KEY: 'tavily-key' } });
    expect(outcome.results.map((result) => result.title)).toEqual(['References and Borrowing - The Rust Programming Language', 'Understanding the borrow checker']);
    expect(outcome.results[0].snippet).toBe('At any given time, you can have either one mutable reference or any number of immutable references.');
    const [request] = requestsTo('/tavily');
    expect(request.headers.authorization).toBe('Bearer tavily-key');
    expect(JSON.parse(request.body)).toMatchObject({ query: 'rust borrow checker', max_results: 4, country: 'united states' });
  });

  it('SearXNG: asks the instance at its base URL for JSON in the wanted language', async () => {
    routes.set('/instance/search', json(fixture('searxng.json')));
    const outcome = await search('rust borrow checker', { engines: ['searxng'], endpoints: {} }, { lang: 'de', country: 'ch', environment: { SEARXNG_URL: `${base}/instance` } });
    expect(outcome.engine).toBe('searxng');
    expect(outcome.results.map((result) => result.url)).toEqual([rustBook, 'https://rustc-dev-guide.rust-lang.org/borrow_check.html']);
    const [request] = requestsTo('/instance/search');
    expect(Object.fromEntries(request.query)).toMatchObject({ q: 'rust borrow checker', format: 'json', language: 'de-CH' });
  });
});

describe('falling back between engines', () => {
  it('retries an engine answering 500 with backoff, then uses the next engine and names the failure', async () => {
    routes.set('/duckduckgo', status(500));
    routes.set('/bing', html(fixture('bing.html')));
    const outcome = await search('q', { engines: ['duckduckgo', 'bing'], retries: 2, retry_delay_ms: 40 });
    expect(outcome.engine).toBe('bing');
    expect(outcome.failures).toEqual([{ engine: 'duckduckgo', reason: 'HTTP 500', attempts: 3 }]);
    const times = requestsTo('/duckduckgo').map((request) => request.receivedAt);
    expect(times).toHaveLength(3);
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(38);
    expect(times[2] - times[1]).toBeGreaterThanOrEqual(78);
  });

  it('keeps the engine that recovers within its retries', async () => {
    let calls = 0;
    routes.set('/duckduckgo', (request, response, body) => (++calls < 3 ? status(503) : html(fixture('duckduckgo.html')))(request, response, body));
    const outcome = await search('q', { engines: ['duckduckgo', 'bing'], retries: 2 });
    expect(outcome.engine).toBe('duckduckgo');
    expect(outcome.failures).toEqual([]);
    expect(requestsTo('/bing')).toHaveLength(0);
  });

  it('moves on at once from a captcha page, a consent wall, HTTP 429 and an empty result page', async () => {
    routes.set('/duckduckgo', html(fixture('duckduckgo-captcha.html')));
    routes.set('/google', (_request, response) => response.writeHead(302, { location: '/consent' }).end());
    routes.set('/consent', html(fixture('google-consent.html')));
    routes.set('/bing', status(429));
    routes.set('/baidu', html(fixture('duckduckgo-empty.html')));
    routes.set('/brave', json(fixture('brave.json')));
    const outcome = await search('q', { engines: ['duckduckgo', 'google', 'bing', 'baidu', 'brave'], retries: 3 }, { environment: { BRAVE_API_KEY: 'k' } });
    expect(outcome.engine).toBe('brave');
    expect(outcome.failures).toEqual([
      { engine: 'duckduckgo', reason: 'blocked: captcha page', attempts: 1 },
      { engine: 'google', reason: 'blocked: cookie consent page', attempts: 1 },
      { engine: 'bing', reason: 'blocked: HTTP 429', attempts: 1 },
      { engine: 'baidu', reason: 'no results', attempts: 1 },
    ]);
  });

  it('recognises a Google "unusual traffic" page as blocked', async () => {
    routes.set('/google', (_request, response) => response.writeHead(302, { location: '/sorry/index?continue=x' }).end());
    routes.set('/sorry/index', html(fixture('google-sorry.html')));
    routes.set('/bing', html(fixture('bing.html')));
    const outcome = await search('q', { engines: ['google', 'bing'] });
    expect(outcome.failures).toEqual([{ engine: 'google', reason: 'blocked: captcha page', attempts: 1 }]);
  });

  it('retries an engine that does not answer in time, then moves on', async () => {
    routes.set('/duckduckgo', () => {
      // Never answers.
    });
    routes.set('/bing', html(fixture('bing.html')));
    const outcome = await search('q', { engines: ['duckduckgo', 'bing'], retries: 1, timeout_ms: 200 });
    expect(outcome.engine).toBe('bing');
    expect(outcome.failures[0]).toMatchObject({ engine: 'duckduckgo', attempts: 2 });
    expect(outcome.failures[0].reason).toMatch(/did not answer within 0\.2 s/);
  });

  it('skips keyed engines without their key, and puts configured keyed engines first by default', async () => {
    routes.set('/duckduckgo', html(fixture('duckduckgo.html')));
    const unkeyed = await search('q', { engines: ['brave', 'tavily', 'searxng', 'duckduckgo'], endpoints: { duckduckgo: `${base}/duckduckgo` } });
    expect(unkeyed.failures).toEqual([
      { engine: 'brave', reason: 'not configured (BRAVE_API_KEY is not set)', attempts: 0 },
      { engine: 'tavily', reason: 'not configured (TAVILY_API_KEY is not set)', attempts: 0 },
      { engine: 'searxng', reason: 'not configured (SEARXNG_URL is not set)', attempts: 0 },
    ]);
    expect(recorded.map((request) => request.path)).toEqual(['/duckduckgo']);

    recorded.length = 0;
    routes.set('/tavily', status(401));
    // An endpoint for SearXNG configures it (it needs no key), so leave it out here.
    const withoutSearxng = Object.fromEntries(Object.entries(endpoints()).filter(([name]) => name !== 'searxng'));
    const keyed = await search('q', { endpoints: withoutSearxng }, { environment: { TAVILY_API_KEY: 'k' } });
    expect(keyed.engine).toBe('duckduckgo');
    expect(keyed.failures).toEqual([{ engine: 'tavily', reason: 'HTTP 401', attempts: 1 }]);
    expect(recorded.map((request) => request.path)).toEqual(['/tavily', '/duckduckgo']);
  });

  it('fails with every engine and its reason when none answers', async () => {
    routes.set('/duckduckgo', status(403));
    routes.set('/bing', status(502));
    const error = await searchFailure('nothing works', { engines: ['duckduckgo', 'bing'], retries: 0 });
    expect(error.code).toBe('web_search_failed');
    expect(error.message).toBe('Every search engine failed for "nothing works" (duckduckgo: blocked: HTTP 403; bing: HTTP 502).');
    expect(error.failures.map((failure) => failure.engine)).toEqual(['duckduckgo', 'bing']);
  });

  it('gives up at once on hosts that do not resolve or refuse, naming each engine, through the CLI', async () => {
    // A closed port on loopback refuses at once; `.invalid` names never resolve and are answered locally.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const recipe = [
      'version: 1',
      'name: offline-search',
      'prompt: Search for something.',
      'agent:',
      '  system_prompt: You search the web.',
      '  tools: [web_search, terminate]',
      'tool_settings:',
      '  web_search:',
      '    engines: [duckduckgo, bing, google]',
      `    endpoints: { duckduckgo: 'http://no-such-host.invalid/', bing: 'http://127.0.0.1:${closedPort}/', google: 'http://also-missing.invalid/search' }`,
      '',
    ].join('\n');
    const model = await startScriptedModelServer({
      turns: [
        { toolCalls: [{ name: 'web_search', arguments: { query: 'offline' } }] },
        { toolCalls: [{ name: 'terminate', arguments: { status: 'failure', message: 'No network.' } }] },
      ],
    });
    try {
      const run = await runCli(['run', 'recipe.yaml', '--json'], {
        cwd: makeFixture({ 'recipe.yaml': recipe }),
        env: { OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model', XDG_CONFIG_HOME: privateNetworkConfigHome() },
        timeoutMs: 60_000,
      });
      expect(run.exitCode, run.stderr).toBe(1);
      const chats = model.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
      const result = toolMessages(chats[1])[0].content;
      expect(result).toContain('Every search engine failed for "offline"');
      expect(result).toMatch(/duckduckgo: http:\/\/no-such-host\.invalid\/\S* could not be reached: ENOTFOUND/);
      expect(result).toMatch(new RegExp(`bing: http://127\\.0\\.0\\.1:${closedPort}/\\S* could not be reached: ECONNREFUSED`));
      expect(result).toMatch(/google: http:\/\/also-missing\.invalid\/search\S* could not be reached: ENOTFOUND/);
      const searchEnd = readEvents(run.json.runDirectory).find((event) => event.type === 'tool-call-end' && event.tool === 'web_search');
      expect(searchEnd?.isError).toBe(true);
      // With the default retries, each engine used to be retried for about 3 s (13 s in all).
      expect(searchEnd?.durationMs).toBeLessThan(3_000);
    } finally {
      await model.close();
    }
  });

  it('stops at the deadline of the whole search and names the engines it did not reach', async () => {
    routes.set('/duckduckgo', () => {
      // Never answers.
    });
    const outcome = await searchFailure('q', { engines: ['duckduckgo', 'bing'], retries: 3, deadline_ms: 300 });
    expect(outcome.failures).toEqual([
      { engine: 'duckduckgo', reason: expect.stringMatching(/did not answer within 0\.3 s/), attempts: 1 },
      { engine: 'bing', reason: "not tried: the search's time limit of 0.3 s ran out", attempts: 0 },
    ]);
    expect(requestsTo('/bing')).toHaveLength(0);
  });

  it('refuses unknown engine names in the settings, listing the known ones', async () => {
    const test = createTestToolContext({ network: privateAllowed, settings: { engines: ['duckduckgo', 'altavista'] } });
    await expect(searchWeb('q', {}, test.context)).rejects.toThrow(/unknown: altavista/);
    await test.dispose();
  });
});

describe('results', () => {
  it('keeps one result per page and at most num_results', async () => {
    const results = [
      { title: 'A', url: 'https://a.example/page', content: 'first' },
      { title: 'A again', url: 'http://A.example/page/#section', content: 'same page' },
      { title: 'B', url: 'https://b.example/', content: 'second' },
      { title: 'C', url: 'https://c.example/', content: 'third' },
    ];
    routes.set('/searxng/search', json(JSON.stringify({ results })));
    const outcome = await search('q', { engines: ['searxng'] }, { numResults: 2 });
    expect(outcome.results.map((result) => result.title)).toEqual(['A', 'B']);
  });

  it('adds the start of each result page with fetch_content, and notes pages it could not read', async () => {
    const article = `<html><head><title>Page</title></head><body><nav>Menu</nav><main><h1>Result page</h1><p>${'Useful text. '.repeat(40)}</p></main></body></html>`;
    routes.set('/page-one', html(article));
    routes.set('/page-two', html('<html><body><main><p>Second page body.</p></main></body></html>'));
    routes.set('/searxng/search', json(JSON.stringify({
      results: [
        { title: 'One', url: `${base}/page-one`, content: 'snippet one' },
        { title: 'Two', url: `${base}/page-two`, content: 'snippet two' },
        { title: 'Blocked', url: `http://localhost:${port}/page-two`, content: 'snippet three' },
        { title: 'Gone', url: `${base}/page-missing`, content: 'snippet four' },
      ],
    })));
    const test = createTestToolContext({
      network: privateAllowed,
      settings: { engines: ['searxng'], endpoints: { searxng: `${base}/searxng` }, content_characters: 100, blocked_domains: ['localhost'] },
    });
    const output = await webSearch.execute({ query: 'q', fetch_content: true }, test.context);
    await test.dispose();
    const text = typeof output === 'string' ? output : output.content;
    expect(text).toContain(`1. One\n   ${base}/page-one\n   snippet one\n   Page content:\n      # Result page\n      \n`.replace('      \n', '\n'));
    expect(text).toMatch(/Useful text\. .* \[\.\.\.\]\n/);
    expect(text).not.toContain('Menu');
    expect(text).toContain('   Page content:\n      Second page body.');
    expect(text).toMatch(/3\. Blocked\n.*\n   snippet three\n   Page content could not be read: .*blocked_domains/);
    expect(text).toMatch(/4\. Gone\n.*\n   snippet four\n   Page content could not be read: .*HTTP 404/);
    expect(requestsTo('/page-two')).toHaveLength(1);
  });

  it('reports the engine used and the engines that failed first', async () => {
    routes.set('/duckduckgo', html(fixture('duckduckgo-captcha.html')));
    routes.set('/bing', html(fixture('bing.html')));
    const test = createTestToolContext({ network: privateAllowed, settings: { engines: ['duckduckgo', 'bing'], endpoints: endpoints() } });
    const output = await webSearch.execute({ query: 'rust borrow checker', num_results: 2 }, test.context);
    await test.dispose();
    const result = typeof output === 'string' ? { content: output } : output;
    expect(result.data).toEqual({
      results: [
        expect.objectContaining({ title: 'References and Borrowing - The Rust Programming Language', url: rustBook }),
        expect.objectContaining({ title: 'MIR borrow check - Rust Compiler Development Guide', url: 'https://rustc-dev-guide.rust-lang.org/borrow_check.html' }),
      ],
    });
    expect(result.content).toBe(
      [
        'Search results for "rust borrow checker" from bing:',
        '(Tried first and failed: duckduckgo: blocked: captcha page.)',
        '',
        '1. References and Borrowing - The Rust Programming Language',
        `   ${rustBook}`,
        '   The borrow checker compares scopes to determine whether all borrows are valid.',
        '',
        '2. MIR borrow check - Rust Compiler Development Guide',
        '   https://rustc-dev-guide.rust-lang.org/borrow_check.html',
        '   The borrow check is Rust\'s "secret sauce" \u2013 it is tasked with enforcing a number of properties.',
      ].join('\n'),
    );
  });
});

describe('web research through the loop', () => {
  it('searches, falls back past a blocked engine, fetches a result page and extracts from it', async () => {
    routes.set('/duckduckgo', status(429));
    routes.set('/bing', html(fixture('bing.html').replace(/https:\/\/users\.rust-lang\.org\/t\/understanding-the-borrow-checker\/1234/, `${base}/forum`)));
    routes.set('/forum', html('<html><head><title>Forum</title></head><body><nav>Forum menu</nav><main><h1>Understanding the borrow checker</h1><p>Answer: use owned values in the struct.</p></main></body></html>'));
    const recipe = [
      'version: 1',
      'name: research',
      'prompt: Find out how to store references in a struct.',
      'agent:',
      '  system_prompt: You research on the web.',
      '  tools: [web_search, web_fetch, terminate]',
      'tool_settings:',
      '  web_search:',
      '    engines: [duckduckgo, bing]',
      `    endpoints: { duckduckgo: '${base}/duckduckgo', bing: '${base}/bing' }`,
      '  web_fetch:',
      `    allowed_domains: [127.0.0.1]`,
      '',
    ].join('\n');
    const folder = makeFixture({ 'recipe.yaml': recipe });
    const model = await startScriptedModelServer({
      turns: [
        { toolCalls: [{ name: 'web_search', arguments: { query: 'rust borrow checker struct', num_results: 3 } }] },
        { toolCalls: [{ name: 'web_fetch', arguments: { url: `${base}/forum` } }] },
        { toolCalls: [{ name: 'web_fetch', arguments: { url: `${base}/forum`, goal: 'the answer' } }] },
        { content: '{"relevant": true, "extraction": "Use owned values in the struct."}' },
        { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'Use owned values.' } }] },
      ],
    });
    try {
      const run = await runCli(['run', 'recipe.yaml', '--json'], {
        cwd: folder,
        env: { OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model', XDG_CONFIG_HOME: privateNetworkConfigHome() },
        timeoutMs: 60_000,
      });
      expect(run.exitCode, run.stderr).toBe(0);
      const chats = model.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
      const searchResult = toolMessages(chats[1])[0].content;
      expect(searchResult).toContain('from bing:');
      expect(searchResult).toContain('(Tried first and failed: duckduckgo: blocked: HTTP 429.)');
      expect(searchResult).toContain(`3. Understanding the borrow checker - help - Rust Users Forum\n   ${base}/forum`);
      const fetchResult = toolMessages(chats[2]).at(-1)!.content;
      expect(fetchResult).toBe(`URL: ${base}/forum\nTitle: Forum\n\n# Understanding the borrow checker\n\nAnswer: use owned values in the struct.`);
      const extractionRequest = chats[3];
      expect(JSON.stringify(extractionRequest.body.messages)).toContain('Goal: the answer');
      expect(extractionRequest.body.response_format).toMatchObject({ type: 'json_schema' });
      expect(toolMessages(chats[4]).at(-1)!.content).toBe(`Extracted from ${base}/forum for the goal "the answer":\n\nUse owned values in the struct.`);
      const events = readEvents(run.json.runDirectory);
      expect(events.filter((event) => event.type === 'tool-call-end').map((event) => [event.tool, event.isError])).toEqual([
        ['web_search', false],
        ['web_fetch', false],
        ['web_fetch', false],
        ['terminate', false],
      ]);
    } finally {
      await model.close();
    }
  });
});
