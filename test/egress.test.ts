/**
 * A run that may reach only named hosts (`sandbox.network: {allow: [...]}`), end to end through the
 * built command: the grant it needs, what validate and inspect say, and the one list holding
 * commands in bubblewrap and Docker, web_fetch and the browser. Every server is on loopback; the
 * test-only mapping (MANUS_TEST_HOSTS) points the names at it, and MANUS_TEST_PUBLIC_ADDRESSES
 * lets 127.0.0.2 stand for a public address while 127.0.0.1 stays private.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { dirname } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxDefaults } from '../runtime/config/defaults.js';
import { EgressPolicy } from '../runtime/services/network/egress-policy.js';
import { RunResourceRegistry } from '../runtime/services/run-resources.js';
import { probeBwrap } from '../runtime/services/sandbox/create-sandbox.js';
import { probeDocker } from '../runtime/services/sandbox/docker-connection.js';
import { chromiumMissing as isChromiumMissing } from './support/fixture-site.js';
import { makeFixture, readEvents, runCli, type CliResult } from './support/run-cli.js';
import { startScriptedModelServer, type RecordedChatRequest, type ScriptedTurn } from './support/scripted-model-server.js';

const bwrap = await probeBwrap();
const docker = await probeDocker(sandboxDefaults.image);
const chromiumMissing = isChromiumMissing('browser_use');
if (!bwrap.usable) console.warn(`egress tests in bubblewrap skipped: ${bwrap.reason}`);
if (!docker.available) console.warn(`egress tests in Docker skipped: ${docker.reason}`);
if (chromiumMissing) console.warn('egress test of the browser skipped: no Chromium');

const publicAddress = '127.0.0.2';
const testNetwork = {
  MANUS_TEST_PUBLIC_ADDRESSES: publicAddress,
  MANUS_TEST_HOSTS: `allowed.test=${publicAddress};other.test=${publicAddress};inside.test=127.0.0.1`,
};

/** A static file server on 127.0.0.2 over `root`: a page, a file and a git repository served the dumb way. */
let site: { server: Server; port: number; root: string };

beforeAll(async () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-egress-site-')));
  writeFileSync(join(root, 'hello.txt'), 'hello through the proxy\n');
  writeFileSync(join(root, 'page.html'), '<html><head><title>Allowed page</title></head><body><p>The allowed page says hello.</p></body></html>');
  makeDumbGitRepository(root);
  const server = createServer((request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url ?? '/', 'http://site').pathname));
    try {
      const file = join(root, path);
      if (!file.startsWith(root) || !statSync(file).isFile()) throw new Error('not a file');
      response.writeHead(200, { 'content-type': path.endsWith('.html') ? 'text/html' : 'application/octet-stream' });
      response.end(readFileSync(file));
    } catch {
      response.writeHead(404).end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, publicAddress, resolve));
  site = { server, port: (server.address() as AddressInfo).port, root };
});

afterAll(async () => {
  site.server.closeAllConnections();
  await new Promise((resolve) => site.server.close(resolve));
});

function makeDumbGitRepository(root: string): void {
  const work = join(root, 'work');
  mkdirSync(work);
  const git = (args: string[], cwd: string) => execFileSync('git', args, { cwd, stdio: 'ignore', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: root } });
  git(['init', '-q', '-b', 'main'], work);
  writeFileSync(join(work, 'README'), 'cloned through the proxy\n');
  git(['add', 'README'], work);
  git(['-c', 'user.name=Test', '-c', 'user.email=test@example.org', 'commit', '-q', '-m', 'first'], work);
  git(['clone', '-q', '--bare', work, join(root, 'repo.git')], root);
  git(['update-server-info'], join(root, 'repo.git'));
}

const recipe = (sandbox: string, tools: string[]) => [
  'version: 1',
  'name: egress-test',
  'prompt: Reach the hosts.',
  'agent:',
  '  system_prompt: You reach hosts.',
  `  tools: [${tools.join(', ')}]`,
  `  sandbox: ${sandbox}`,
  '',
].join('\n');

const call = (name: string, args: Record<string, unknown>): ScriptedTurn => ({ toolCalls: [{ name, arguments: args }] });
const terminate: ScriptedTurn = call('terminate', { status: 'success', message: 'done' });

interface EgressRun extends CliResult {
  toolResults: string[];
  events: Array<Record<string, any>>;
}

async function runRecipe(fixture: string, args: string[], turns: ScriptedTurn[], env: Record<string, string> = {}): Promise<EgressRun> {
  const server = await startScriptedModelServer({ turns });
  try {
    const result = await runCli(['run', 'recipe.yaml', '--ci', '--json', ...args], {
      cwd: fixture,
      timeoutMs: 120_000,
      env: { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model', MANUS_PYTHON: '/usr/bin/python3', ...testNetwork, ...env },
    });
    const chats = server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
    const last = chats.at(-1)?.body.messages ?? [];
    const toolResults = last.filter((message) => message.role === 'tool').map((message) => String(message.content));
    const events = result.json?.runDirectory ? readEvents(result.json.runDirectory) : [];
    return { ...result, toolResults, events };
  } finally {
    await server.close();
  }
}

/** Each probe prints one line `name: outcome`, so a failure shows what every client saw. */
function probeScript(port: number, withGit: boolean, withCurl: boolean): string {
  const allowed = `http://allowed.test:${port}`;
  const other = `http://other.test:${port}`;
  const python = [
    'import socket, urllib.request',
    'def fetch(url):',
    '    try: return urllib.request.urlopen(url, timeout=10).read().decode().strip()',
    '    except Exception as error: return "failed " + str(error)',
    `print("urllib-allowed:", fetch("${allowed}/hello.txt"))`,
    `print("urllib-other:", fetch("${other}/hello.txt"))`,
    'for name, target in (("raw-tcp-public", ("192.0.2.1", 80)), ("raw-tcp-site", ("' + publicAddress + `", ${port}))):`,
    '    try:',
    '        socket.create_connection(target, timeout=5).close(); print(name + ":", "connected")',
    '    except Exception as error: print(name + ":", "failed", error)',
    'try: print("dns:", socket.getaddrinfo("allowed.test", 80))',
    'except Exception as error: print("dns:", "failed", error)',
  ].join('\n');
  return [
    'export HOME=/tmp',
    ...(withCurl
      ? [
        `echo "curl-allowed: $(curl -sS -f ${allowed}/hello.txt 2>&1)"`,
        `echo "curl-connect: $(curl -sS -f -p ${allowed}/hello.txt 2>&1)"`,
        `echo "curl-socks: $(curl -sS -f --proxy "$ALL_PROXY" ${allowed}/hello.txt 2>&1)"`,
        `echo "curl-other: $(curl -sS ${other}/hello.txt 2>&1)"`,
        `echo "curl-other-socks: $(curl -sS --proxy "$ALL_PROXY" ${other}/hello.txt 2>&1)"`,
      ]
      : []),
    ...(withGit
      ? [
        `git clone -q ${allowed}/repo.git /tmp/allowed-clone 2>&1 && echo "git-allowed: $(cat /tmp/allowed-clone/README)"`,
        `echo "git-other: $(git clone -q ${other}/repo.git /tmp/other-clone 2>&1 | tr '\\n' ' ')"`,
      ]
      : []),
    `python3 - <<'PY'\n${python}\nPY`,
  ].join('\n');
}

function lineOf(output: string, name: string): string {
  return output.split('\n').find((line) => line.startsWith(`${name}:`)) ?? `${name}: (no line)`;
}

describe('declaring allowed hosts', () => {
  it('validate notes the request, inspect lists the hosts, and a run needs --trust hosts', async () => {
    const fixture = makeFixture({ 'recipe.yaml': recipe('{ kind: bwrap, network: { allow: [allowed.test, "*.wikipedia.org", "pypi.org:443"] } }', ['bash', 'terminate']) });
    const validated = await runCli(['validate', 'recipe.yaml'], { cwd: fixture });
    expect(validated.exitCode).toBe(0);
    expect(validated.stdout + validated.stderr).toMatch(/sandbox\.network\.allow: \[allowed\.test, \*\.wikipedia\.org, pypi\.org:443\].*a run needs --trust hosts/);
    const inspected = await runCli(['inspect', 'recipe.yaml'], { cwd: fixture });
    expect(inspected.stdout).toContain('only these hosts, for sandboxed code, web tools, the browser and MCP clients alike: allowed.test, *.wikipedia.org, pypi.org:443');
    const inspectedJson = await runCli(['inspect', 'recipe.yaml', '--json'], { cwd: fixture });
    expect(inspectedJson.json.network.allowHosts).toEqual(['allowed.test', '*.wikipedia.org', 'pypi.org:443']);
    expect(inspectedJson.json.grantsNeeded).toContain('hosts');

    const refused = await runRecipe(fixture, [], [terminate]);
    expect(refused.exitCode).toBe(5);
    expect(refused.stderr).toContain('--trust hosts');
  });

  it('a bad pattern is an error at its file, line and column', async () => {
    const fixture = makeFixture({ 'recipe.yaml': recipe('{ kind: bwrap, network: { allow: [allowed.test, "https://example.org/"] } }', ['bash', 'terminate']) });
    const validated = await runCli(['validate', 'recipe.yaml'], { cwd: fixture });
    expect(validated.exitCode).toBe(2);
    expect(validated.stdout + validated.stderr).toMatch(/recipe\.yaml:7:\d+.*sandbox\.network\.allow: 'https:\/\/example\.org\/' is a URL/);
  });

  it('hosts the user lists under network.allow need no grant, and --trust network holds them too', async () => {
    const fixture = makeFixture({ 'recipe.yaml': recipe('{ kind: bwrap, network: { allow: [api.example.org] } }', ['terminate']) });
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'manus-egress-config-')));
    mkdirSync(join(home, 'manus'));
    writeFileSync(join(home, 'manus', 'config.yaml'), 'version: 1\nnetwork:\n  allow: ["*.example.org"]\n');
    const listed = await runRecipe(fixture, [], [terminate], { XDG_CONFIG_HOME: home });
    expect(listed.exitCode, listed.stderr).toBe(0);
    const whole = await runRecipe(fixture, ['--trust', 'network'], [terminate]);
    expect(whole.exitCode, whole.stderr).toBe(0);
  });
});

describe.skipIf(!bwrap.usable)('allowed hosts in the bubblewrap sandbox', () => {
  it('curl, urllib and git reach the allowed host through the proxy; another host, a raw connection and a lookup fail', async () => {
    const fixture = makeFixture({ 'recipe.yaml': recipe('{ kind: bwrap, network: { allow: [allowed.test] } }', ['bash', 'terminate']) });
    const run = await runRecipe(fixture, ['--trust', 'hosts'], [call('bash', { command: probeScript(site.port, true, true) }), terminate]);
    expect(run.exitCode, run.stderr).toBe(0);
    const output = run.toolResults[0];
    expect(lineOf(output, 'curl-allowed')).toBe('curl-allowed: hello through the proxy');
    expect(lineOf(output, 'curl-connect')).toBe('curl-connect: hello through the proxy');
    expect(lineOf(output, 'curl-socks')).toBe('curl-socks: hello through the proxy');
    expect(lineOf(output, 'urllib-allowed')).toBe('urllib-allowed: hello through the proxy');
    expect(lineOf(output, 'git-allowed')).toBe('git-allowed: cloned through the proxy');
    expect(lineOf(output, 'curl-other')).toContain('other.test is not in the run\'s allowed hosts');
    expect(lineOf(output, 'curl-other-socks')).toMatch(/SOCKS5.*other\.test/);
    expect(lineOf(output, 'urllib-other')).toMatch(/^urllib-other: failed .*403/);
    expect(lineOf(output, 'git-other')).toMatch(/403/);
    expect(lineOf(output, 'raw-tcp-public')).toMatch(/^raw-tcp-public: failed/);
    expect(lineOf(output, 'raw-tcp-site')).toMatch(/^raw-tcp-site: failed/);
    expect(lineOf(output, 'dns')).toMatch(/^dns: failed/);
    // The line the sandbox adds, naming the host and the setting that would allow it.
    expect(output).toMatch(/manus: connection to other\.test:\d+ refused: .*sandbox\.network\.allow.*--trust hosts/);
    const refusals = run.events.filter((event) => event.type === 'connection-refused');
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals[0]).toMatchObject({ host: 'other.test', port: site.port, reason: 'not-listed', via: 'sandbox', tool: 'bash' });
    expect(refusals[0].command).toContain('curl');
    // The terminal's progress and the HTML report show each refusal.
    expect(run.stderr).toMatch(/bash \(.*\) was refused other\.test:\d+ \(not in sandbox\.network\.allow/);
    const view = await runCli(['view', run.json.runId], { cwd: fixture });
    expect(readFileSync(view.stdout.trim(), 'utf8')).toMatch(/Connection refused to other\.test:\d+ for bash/);
  }, 120_000);

  it('an allowed name that resolves to a private address is refused unless the user allows private addresses', async () => {
    const fixture = makeFixture({ 'recipe.yaml': recipe('{ kind: bwrap, network: { allow: [inside.test] } }', ['bash', 'terminate']) });
    const run = await runRecipe(fixture, ['--trust', 'hosts'], [call('bash', { command: `curl -sS http://inside.test:${site.port}/hello.txt` }), terminate]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.toolResults[0]).toContain('resolves to the private address 127.0.0.1');
    expect(run.events.find((event) => event.type === 'connection-refused')).toMatchObject({ host: 'inside.test', reason: 'private-address' });
  }, 60_000);
});

describe.skipIf(!docker.available)('allowed hosts in the Docker sandbox', () => {
  it('urllib reaches the allowed host through the image\'s socat bridge; another host, a raw connection and a lookup fail', async () => {
    const fixture = makeFixture({ 'recipe.yaml': recipe('{ kind: docker, network: { allow: [allowed.test] } }', ['bash', 'terminate']) });
    const run = await runRecipe(fixture, ['--trust', 'hosts'], [call('bash', { command: probeScript(site.port, false, false) }), terminate]);
    expect(run.exitCode, run.stderr).toBe(0);
    const output = run.toolResults[0];
    expect(lineOf(output, 'urllib-allowed')).toBe('urllib-allowed: hello through the proxy');
    expect(lineOf(output, 'urllib-other')).toMatch(/^urllib-other: failed .*403/);
    expect(lineOf(output, 'raw-tcp-public')).toMatch(/^raw-tcp-public: failed/);
    expect(lineOf(output, 'raw-tcp-site')).toMatch(/^raw-tcp-site: failed/);
    expect(lineOf(output, 'dns')).toMatch(/^dns: failed/);
    expect(output).toMatch(/manus: connection to other\.test:\d+ refused/);
    expect(run.events.find((event) => event.type === 'connection-refused')).toMatchObject({ host: 'other.test', via: 'sandbox', tool: 'bash' });
  }, 120_000);
});

describe('allowed hosts for web_fetch and the browser', () => {
  it('web_fetch reaches the allowed host and is refused another, naming the setting', async () => {
    const fixture = makeFixture({ 'recipe.yaml': recipe('{ kind: bwrap, network: { allow: [allowed.test] } }', ['web_fetch', 'terminate']) });
    const run = await runRecipe(fixture, ['--trust', 'hosts'], [
      { toolCalls: [{ name: 'web_fetch', arguments: { url: `http://allowed.test:${site.port}/page.html` } }, { name: 'web_fetch', arguments: { url: `http://other.test:${site.port}/page.html` } }] },
      terminate,
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.toolResults[0]).toContain('The allowed page says hello.');
    expect(run.toolResults[1]).toMatch(/other\.test is not in the run's allowed hosts.*sandbox\.network\.allow/);
    expect(run.events.find((event) => event.type === 'connection-refused')).toMatchObject({ host: 'other.test', via: 'fetch', tool: 'web_fetch' });
  }, 60_000);

  it.skipIf(chromiumMissing)('the browser goes through the proxy: the allowed host opens, another is refused', async () => {
    const fixture = makeFixture({ 'recipe.yaml': recipe('{ kind: bwrap, network: { allow: [allowed.test] } }', ['browser_use', 'terminate']) });
    const run = await runRecipe(fixture, ['--trust', 'hosts'], [
      call('browser_use', { action: 'go_to_url', url: `http://allowed.test:${site.port}/page.html` }),
      call('browser_use', { action: 'go_to_url', url: `http://other.test:${site.port}/page.html` }),
      terminate,
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.toolResults[0]).toContain('Allowed page');
    expect(run.toolResults[1]).not.toContain('The allowed page says hello.');
    expect(run.events.find((event) => event.type === 'connection-refused')).toMatchObject({ host: 'other.test', via: 'browser' });
  }, 120_000);
});

describe('the egress proxy itself', () => {
  it('listens on sockets in a folder only its user opens, wants the run\'s credential on its loopback port, and is gone when the run ends', async () => {
    const resources = new RunResourceRegistry();
    const policy = new EgressPolicy({ hosts: ['allowed.test'], access: { allowPrivate: false }, resources, onRefused: () => undefined });
    const proxy = await policy.proxy();
    const folder = dirname(proxy.httpSocket);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    expect(statSync(proxy.httpSocket).isSocket() && statSync(proxy.socksSocket).isSocket()).toBe(true);
    const browser = await proxy.browser();
    expect(new URL(browser.server).hostname).toBe('127.0.0.1');
    const status = await new Promise<number>((resolve, reject) => {
      const { hostname, port } = new URL(browser.server);
      request({ host: hostname, port, method: 'GET', path: `http://allowed.test:${site.port}/hello.txt` }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      }).on('error', reject).end();
    });
    expect(status).toBe(407);
    expect(await resources.disposeAll()).toEqual([]);
    expect(existsSync(folder)).toBe(false);
  });
});
