/**
 * MCP servers as a source of tools, driven through real runs of the kernel: the test server in
 * test/support (written with the SDK) and the published filesystem server, each a real process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sandboxDefaults } from '../runtime/config/defaults.js';
import { probeBwrap } from '../runtime/services/sandbox/create-sandbox.js';
import { probeDocker } from '../runtime/services/sandbox/docker-connection.js';
import type { RecipeOverrides } from '../runtime/runs/recipe/resolve-recipe.js';
import { processesWithArgument } from './support/processes.js';
import { useInProcessRuns } from './support/in-process-loop.js';
import { repositoryRoot } from './support/run-cli.js';
import { callReply, messageText, terminateReply, type ScriptedTurn } from './support/scripted-chat-model.js';

const testServer = join(repositoryRoot, 'test', 'support', 'mcp-test-server.mjs');
const filesystemServer = join(repositoryRoot, 'node_modules', '.bin', 'mcp-server-filesystem');
const everythingServer = join(repositoryRoot, 'node_modules', '.bin', 'mcp-server-everything');

/** Recipe lines declaring the test server as `test`, with extra settings. */
function testServerRecipe(extra = '', name = 'test'): string {
  return [
    'mcp_servers:',
    `  ${name}:`,
    '    command: node',
    `    args: [${JSON.stringify(testServer)}]`,
    ...extra.split('\n').filter(Boolean).map((line) => `    ${line}`),
  ].join('\n');
}

const trusted = { trust: ['mcp' as const] };
const toolText = (request: { messages: Array<{ role: string; content: unknown }> }) =>
  request.messages.filter((message) => message.role === 'tool').map((message) => messageText(message as never));

/**
 * The filesystem server asks for the client's roots once it is initialized and takes them as its
 * allowed folders asynchronously, so a call made the instant the server is ready can still see
 * none; a model's first reply comes later than that, and this scripted one waits as long.
 */
function firstCallOnceRootsAreTaken(name: string): ScriptedTurn {
  return { ...callReply(name), delayMs: 500 };
}

describe('MCP tools in a run', () => {
  const run = useInProcessRuns();

  it('offers the named tools as mcp_<server>_<tool> and keeps text, images, resources, structured content and errors', async () => {
    const { result, model, events } = await run([
      callReply('mcp_test_echo', { text: 'hello' }),
      callReply('mcp_test_image'),
      callReply('mcp_test_resource'),
      callReply('mcp_test_fail'),
      terminateReply('finished'),
    ], { tools: ['mcp_test_echo', 'mcp_test_image', 'mcp_test_resource', 'mcp_test_fail', 'terminate'], recipe: testServerRecipe(), overrides: trusted, profile: 'vision: true' });
    expect(result.status).toBe('success');
    expect(model.requests[0].toolNames.sort()).toEqual(['mcp_test_echo', 'mcp_test_fail', 'mcp_test_image', 'mcp_test_resource', 'terminate']);
    const texts = toolText(model.requests[4]);
    expect(texts[0]).toBe('echo: hello');
    expect(texts[1]).toContain('a pixel');
    // The image goes to the vision model with the next request.
    expect(JSON.stringify(model.requests[2].messages.at(-1))).toContain('data:image/png;base64,');
    expect(texts[2]).toContain('[resource file:///notes.txt (text/plain)]\nthe notes');
    expect(texts[2]).toContain('"count": 3');
    expect(texts[3]).toBe('it went wrong');
    const ends = events.filter((event) => event.type === 'tool-call-end');
    expect(ends.map((event) => event.isError)).toEqual([false, false, false, true, false]);
    expect(events.find((event) => event.type === 'mcp-server-ready')).toMatchObject({ server: 'test', place: 'host' });
  });

  it('offers all of a server\'s tools for mcp_<server>_*, within allow and deny', async () => {
    const { model } = await run([terminateReply()], { tools: ['mcp_test_*', 'terminate'], recipe: testServerRecipe('tools: { deny: [crash, slow] }'), overrides: trusted });
    expect(model.requests[0].toolNames).toContain('mcp_test_echo');
    expect(model.requests[0].toolNames).not.toContain('mcp_test_crash');
    expect(model.requests[0].toolNames).not.toContain('mcp_test_slow');
    const allowed = await run([terminateReply()], { tools: ['mcp_test_*', 'terminate'], recipe: testServerRecipe('tools: { allow: [echo] }'), overrides: trusted });
    expect(allowed.model.requests[0].toolNames.sort()).toEqual(['mcp_test_echo', 'terminate']);
  });

  it('names a tool the server does not have, with what it has, before the first model request', async () => {
    const { result, model } = await run([terminateReply()], { tools: ['mcp_test_ecko', 'terminate'], recipe: testServerRecipe('tools: { allow: [echo, fail] }'), overrides: trusted });
    expect(result.error?.code).toBe('config_invalid');
    expect(result.answer).toContain("lists the tool 'mcp_test_ecko', which the MCP server 'test' does not offer; it offers: mcp_test_echo, mcp_test_fail");
    expect(result.answer).toMatch(/recipe\.yaml:\d+:\d+/);
    expect(model.requests).toHaveLength(0);
  });

  it('starts only the servers the agent refers to', async () => {
    const { events } = await run([terminateReply()], {
      tools: ['mcp_test_echo', 'terminate'],
      recipe: `${testServerRecipe()}\n  unused:\n    command: /nonexistent/server`,
      overrides: trusted,
    });
    expect(events.filter((event) => event.type === 'mcp-server-ready' || event.type === 'mcp-server-failed').map((event) => event.server)).toEqual(['test']);
  });

  it('passes literal and {env: NAME} variables and starts the server in the declaring folder', async () => {
    {
      const { model, events, folder } = await run([
        callReply('mcp_test_environment', { name: 'GREETING' }),
        callReply('mcp_test_environment', { name: 'TOKEN' }),
        terminateReply(),
      ], { tools: ['mcp_test_environment', 'terminate'], recipe: testServerRecipe('env: { GREETING: hi, TOKEN: { env: MCP_TEST_SECRET_TOKEN } }'), overrides: { trust: ['mcp', 'env'] }, environment: { MCP_TEST_SECRET_TOKEN: 'secret-value-1234' } });
      const texts = toolText(model.requests[2]);
      expect(texts[0]).toBe(`GREETING=hi cwd=${folder}`);
      // The secret reaches the server but no sink: not the model, not the events.
      expect(texts[1]).toBe(`TOKEN=[redacted] cwd=${folder}`);
      expect(JSON.stringify(events)).not.toContain('secret-value-1234');
    }
    const missing = await run([terminateReply()], { tools: ['mcp_test_environment', 'terminate'], recipe: testServerRecipe('env: { TOKEN: { env: MCP_TEST_SECRET_TOKEN } }'), overrides: trusted });
    expect(missing.result.error?.code).toBe('config_invalid');
    expect(missing.result.answer).toMatch(/recipe\.yaml:\d+:\d+: error: the MCP server 'test' needs environment variables that are not set: MCP_TEST_SECRET_TOKEN/);
  });

  it('cancels a call that takes longer than call_timeout_seconds and goes on', async () => {
    const { result, model } = await run([
      callReply('mcp_test_slow', { seconds: 30 }),
      callReply('mcp_test_echo', { text: 'after' }),
      terminateReply(),
    ], { tools: ['mcp_test_slow', 'mcp_test_echo', 'terminate'], recipe: testServerRecipe('call_timeout_seconds: 1'), overrides: trusted });
    expect(result.status).toBe('success');
    const texts = toolText(model.requests[2]);
    expect(texts[0]).toContain("took longer than 1 s (call_timeout_seconds) and was cancelled");
    expect(texts[1]).toBe('echo: after');
    expect(result.durationMs).toBeLessThan(15_000);
  });

  it('restarts a server that crashed, once', async () => {
    const { result, model, events } = await run([
      callReply('mcp_test_crash'),
      callReply('mcp_test_echo', { text: 'again' }),
      terminateReply(),
    ], { tools: ['mcp_test_*', 'terminate'], recipe: testServerRecipe(), overrides: trusted });
    expect(result.status).toBe('success');
    expect(toolText(model.requests[2])[0]).toContain("the MCP server 'test' exited during the call to 'crash'");
    expect(toolText(model.requests[2])[1]).toBe('echo: again');
    expect(events.some((event) => event.type === 'mcp-server-restart')).toBe(true);
  });

  it('fails the run with exit code 6 when a required server is lost', async () => {
    const crashFile = join(mkdtempSync(join(tmpdir(), 'mcp-crash-')), 'crashed');
    const { result } = await run([
      callReply('mcp_test_crash'),
      { content: 'waiting', delayMs: 3000 },
      terminateReply(),
    ], {
      tools: ['mcp_test_*', 'terminate'],
      recipe: testServerRecipe(`required: true\nenv: { MCP_TEST_CRASH_FILE: ${JSON.stringify(crashFile)} }`),
      overrides: trusted,
      agent: 'finish_on_text: false',
    });
    expect(result.status).toBe('tool-source-failed');
    expect(result.status).toBe('tool-source-failed');
    expect(result.answer).toContain("the MCP server 'test' was lost");
    expect(result.answer).toContain('refusing to start after a crash');
  });

  it('names a server that never starts: exit code 6 when required, a warning otherwise', async () => {
    const recipe = (required: boolean) => [
      'mcp_servers:',
      '  stuck:',
      '    command: sleep',
      '    args: ["30"]',
      '    startup_timeout_seconds: 1',
      `    required: ${required}`,
    ].join('\n');
    const required = await run([terminateReply()], { tools: ['mcp_stuck_*', 'terminate'], recipe: recipe(true), overrides: trusted });
    expect(required.result.status).toBe('tool-source-failed');
    expect(required.result.answer).toContain("the MCP server 'stuck' could not be started: it did not answer within 1 s (startup_timeout_seconds)");
    expect(required.result.durationMs).toBeLessThan(10_000);
    const optional = await run([terminateReply()], { tools: ['mcp_stuck_*', 'terminate'], recipe: recipe(false), overrides: trusted });
    expect(optional.result.status).toBe('success');
    expect(optional.events.some((event) => event.type === 'run-warning' && event.message.includes("'stuck' could not be started"))).toBe(true);
  });

  it('names the missing command of a server that cannot start', async () => {
    const { result } = await run([terminateReply()], {
      tools: ['mcp_gone_*', 'terminate'],
      recipe: 'mcp_servers:\n  gone:\n    command: ./no-such-server\n    required: true',
      overrides: trusted,
    });
    expect(result.status).toBe('tool-source-failed');
    expect(result.answer).toMatch(/'gone' could not be started: .*no-such-server/s);
  });

  it('leaves no server running when the run ends, or when it is interrupted', async () => {
    const marker = `marker-${Math.random().toString(16).slice(2)}`;
    const recipe = `mcp_servers:\n  test:\n    command: node\n    args: [${JSON.stringify(testServer)}, ${marker}]`;
    await run([callReply('mcp_test_echo', { text: 'x' }), terminateReply()], { tools: ['mcp_test_*', 'terminate'], recipe, overrides: trusted });
    expect(processesWithArgument(marker)).toEqual([]);
    const interrupt = new AbortController();
    const { result } = await run([
      () => {
        expect(processesWithArgument(marker).length).toBeGreaterThan(0);
        setTimeout(() => interrupt.abort(), 100);
        return { content: 'thinking', delayMs: 30_000 };
      },
    ], { tools: ['mcp_test_*', 'terminate'], recipe, overrides: trusted, signal: interrupt.signal });
    expect(result.status).toBe('interrupted');
    expect(processesWithArgument(marker)).toEqual([]);
  });

  it('refreshes the toolbox when the server\'s tool list changes', async () => {
    const { model } = await run([
      callReply('mcp_test_add_tool'),
      (request) => {
        expect(request.toolNames).toContain('mcp_test_added');
        return callReply('mcp_test_added');
      },
      terminateReply(),
    ], { tools: ['mcp_test_*', 'terminate'], recipe: testServerRecipe(), overrides: trusted });
    expect(model.requests[0].toolNames).not.toContain('mcp_test_added');
    expect(toolText(model.requests[2])[1]).toBe('added tool answers');
  });

  it('refuses sampling unless the user grants it, and counts granted sampling in the run\'s usage', async () => {
    const refused = await run([callReply('mcp_test_ask_model', { question: 'two plus two?' }), terminateReply()], { tools: ['mcp_test_*', 'terminate'], recipe: testServerRecipe(), overrides: trusted });
    expect(toolText(refused.model.requests[1])[0]).toContain('sampling is not allowed in this run: the user has not granted it (--trust sampling)');
    const granted = await run([
      callReply('mcp_test_ask_model', { question: 'two plus two?' }),
      { content: 'four' },
      terminateReply(),
    ], { tools: ['mcp_test_*', 'terminate'], recipe: testServerRecipe(), overrides: { trust: ['mcp', 'sampling'] } });
    expect(messageText(granted.model.requests[1].messages.at(-1)!)).toBe('two plus two?');
    expect(toolText(granted.model.requests[2])[0]).toBe('model said: four');
    expect(granted.result.usage.totalTokens).toBe(45);
  });

  it('asks the user for elicitation, and declines when no one can answer', async () => {
    const headless = await run([callReply('mcp_test_ask_user'), terminateReply()], { tools: ['mcp_test_*', 'terminate'], recipe: testServerRecipe(), overrides: trusted });
    expect(toolText(headless.model.requests[1])[0]).toBe('user decline');
    const answered = await run([callReply('mcp_test_ask_user'), terminateReply()], { tools: ['mcp_test_*', 'terminate'], recipe: testServerRecipe(), overrides: trusted, answers: ['blue'] });
    expect(toolText(answered.model.requests[1])[0]).toBe('user accept: blue');
  });

  it('uses the published filesystem server, which works in the run\'s workspace, offered as its MCP root', async () => {
    const { result, model } = await run([
      firstCallOnceRootsAreTaken('mcp_fs_list_allowed_directories'),
      callReply('mcp_fs_write_file', { path: 'note.txt', content: 'written through MCP' }),
      terminateReply(),
    ], {
      tools: ['mcp_fs_*', 'terminate'],
      // The folder argument is replaced by the roots the runtime offers, as the server documents.
      recipe: `mcp_servers:\n  fs:\n    command: ${JSON.stringify(filesystemServer)}\n    args: ["."]`,
      overrides: trusted,
    });
    expect(result.status, result.answer).toBe('success');
    expect(model.requests[0].toolNames).toEqual(expect.arrayContaining(['mcp_fs_read_text_file', 'mcp_fs_list_directory', 'terminate']));
    expect(toolText(model.requests[1])[0]).toContain(realpathSync(result.workspace));
    expect(readFileSync(join(result.workspace, 'note.txt'), 'utf8')).toBe('written through MCP');
  });

  for (const [place, overrides] of [['bwrap', {}], ['host', trusted]] as const) {
    it(`finds a server installed with npm above its folder by name, and offers it the workspace as the ${place} sees it`, async (context) => {
      if (place === 'bwrap') {
        const bwrap = await probeBwrap();
        if (!bwrap.usable) {
          console.log(`skipped: bubblewrap is not usable here (${bwrap.reason})`);
          context.skip();
        }
      }
      const { result, model, events } = await run([firstCallOnceRootsAreTaken('mcp_reader_list_allowed_directories'), terminateReply()], {
        tools: ['mcp_reader_*', 'terminate'],
        // The server starts in server/; node_modules/.bin above it is where npm puts an installed server's command.
        recipe: 'mcp_servers:\n  reader:\n    command: workspace-reader\n    cwd: server',
        files: {
          'server/README': 'the server starts here\n',
          'node_modules/.bin/workspace-reader': `#!/bin/sh\nexec node ${JSON.stringify(filesystemServer)}\n`,
        },
        // Inside the checkout, whose node_modules (where the real server is installed) lies above the run's folder.
        parent: repositoryScratch(),
        overrides,
      });
      expect(result.status, result.answer).toBe('success');
      expect(events.find((event) => event.type === 'mcp-server-ready')).toMatchObject({ place });
      // An empty workspace is removed after the run, so its path is compared as it was given.
      expect(toolText(model.requests[1])[0]).toContain(result.workspace);
    });
  }

  for (const [mode, path, place] of [['streamableHttp', '/mcp', 'streamable-http'], ['sse', '/sse', 'sse']] as const) {
    it(`speaks to an HTTP server (${place}), falling back to SSE for old servers`, async () => {
      const server = await startEverythingServer(mode);
      try {
        const { result, model, events } = await run([callReply('mcp_everything_echo', { message: 'over http' }), terminateReply()], {
          tools: ['mcp_everything_echo', 'terminate'],
          recipe: `mcp_servers:\n  everything:\n    url: http://127.0.0.1:${server.port}${path}\n    headers_env: { X-Test: TEST_HEADER }`,
          // A recipe's server handed one of the user's variables needs the user's grant.
          overrides: { trust: ['env'] },
          environment: { TEST_HEADER: 'header-value' },
          // A recipe's server on loopback needs the user's leave to reach private addresses.
          userConfig: 'version: 1\nnetwork:\n  allow_private: true\n',
        });
        expect(result.status, result.answer).toBe('success');
        expect(events.find((event) => event.type === 'mcp-server-ready')).toMatchObject({ place });
        expect(toolText(model.requests[1])[0]).toContain('over http');
      } finally {
        server.child.kill();
      }
    });
  }

  it('cuts a 30 MB result off while it is read, answers the call with an error saying so, and keeps the server usable', async () => {
    const { result, model, events } = await run([
      callReply('mcp_test_huge'),
      callReply('mcp_test_echo', { text: 'still here' }),
      terminateReply(),
    ], { tools: ['mcp_test_huge', 'mcp_test_echo', 'terminate'], recipe: testServerRecipe('call_timeout_seconds: 100'), overrides: trusted });
    expect(result.status, result.answer).toBe('success');
    const [cut, echo] = toolText(model.requests[2]);
    expect(cut).toMatch(/the MCP server 'test' answered with more than 10 MB \(max_result_mb\), so its reply was cut off while it was read/);
    expect(echo).toBe('echo: still here');
    expect(events.filter((event) => event.type === 'tool-call-end').map((event) => event.isError)).toEqual([true, false, false]);
    expect(events.some((event) => event.type === 'mcp-server-restart')).toBe(false);
    const small = await run([callReply('mcp_test_huge'), terminateReply()], { tools: ['mcp_test_huge', 'terminate'], recipe: testServerRecipe('max_result_mb: 0.5\nenv: { MCP_TEST_HUGE_MB: "1" }'), overrides: trusted });
    expect(toolText(small.model.requests[1])[0]).toMatch(/more than 0\.5 MB/);
  });

  for (const mode of ['json', 'sse'] as const) {
    it(`cuts a 30 MB result of an HTTP server (${mode}) off while it is read, and keeps the server usable`, async () => {
      const server = await startTestHttpServer(mode);
      try {
        const { result, model } = await run([callReply('mcp_web_huge'), callReply('mcp_web_echo', { text: 'still here' }), terminateReply()], {
          tools: ['mcp_web_huge', 'mcp_web_echo', 'terminate'],
          userConfig: `version: 1\nmcp_servers:\n  web:\n    url: http://127.0.0.1:${server.port}/mcp\n    call_timeout_seconds: 100\n`,
        });
        expect(result.status, result.answer).toBe('success');
        const [cut, echo] = toolText(model.requests[2]);
        expect(cut).toMatch(/the MCP server 'web' answered with more than 10 MB \(max_result_mb\)/);
        expect(echo).toBe('echo: still here');
      } finally {
        server.child.kill();
      }
    });
  }

  it('refuses a tool name two servers would give, naming both servers and where they were declared', async () => {
    const server = (name: string, tool: string) => [`  ${name}:`, '    command: node', `    args: [${JSON.stringify(testServer)}]`, `    env: { MCP_TEST_TOOL_NAME: ${tool}, MCP_TEST_LABEL: ${name} }`];
    const recipe = ['mcp_servers:', ...server('corp', 'vault_read'), ...server('corp_vault', 'read')].join('\n');
    const attempt = run([terminateReply()], { tools: ['mcp_corp_vault_read', 'terminate'], recipe, overrides: trusted });
    await expect(attempt).rejects.toThrow(/'mcp_corp_vault_read'.*the MCP server 'corp' \(declared in .*recipe\.yaml:\d+:\d+\) and the MCP server 'corp_vault' \(declared in .*recipe\.yaml:\d+:\d+\)/);
  });

  it('refuses a recipe\'s HTTP server on a private address unless the user allows private addresses; the user\'s own server may be anywhere', async () => {
    const server = await startEverythingServer('streamableHttp');
    try {
      const url = `http://127.0.0.1:${server.port}/mcp`;
      for (const address of [url, `http://localhost:${server.port}/mcp`, `http://[::ffff:127.0.0.1]:${server.port}/mcp`]) {
        const refused = await run([terminateReply()], { tools: ['mcp_everything_echo', 'terminate'], recipe: `mcp_servers:\n  everything:\n    url: ${address}\n    required: true` });
        expect(refused.result.status).toBe('tool-source-failed');
        expect(refused.result.answer).toMatch(/everything.*private address/s);
        expect(refused.model.requests).toHaveLength(0);
      }
      const users = await run([callReply('mcp_everything_echo', { message: 'from the user' }), terminateReply()], {
        tools: ['mcp_everything_echo', 'terminate'],
        userConfig: `version: 1\nmcp_servers:\n  everything:\n    url: ${url}\n`,
      });
      expect(users.result.status, users.result.answer).toBe('success');
      expect(toolText(users.model.requests[1])[0]).toContain('from the user');
    } finally {
      server.child.kill();
    }
  });

  describe('a recipe\'s stdio server in the bubblewrap sandbox, without --trust mcp', () => {
    const asRoot = process.getuid?.() === 0;
    const places: Array<[string, () => { parent?: string; folderMode?: number; overrides?: RecipeOverrides }]> = [
      ['a folder under /tmp, which the sandbox covers with its own', () => ({})],
      ['a folder only its owner may open (0700, as mktemp -d makes)', () => ({ folderMode: 0o700 })],
      // The workspace lies elsewhere, so nothing of the run's own opens the way to the launch folder.
      ['a folder inside one only its owner may pass through (as a root runtime\'s home)', () => ({
        parent: privateFolder(),
        overrides: { workspace: join(repositoryScratch(), 'workspace') },
      })],
    ];
    for (const [place, where] of places) it(`sees its launch folder read-only, and no more, in ${place}`, async (context) => {
      const bwrap = await probeBwrap();
      if (!bwrap.usable) {
        console.log(`skipped: bubblewrap is not usable here (${bwrap.reason})`);
        context.skip();
      }
      const placement = where();
      if (placement.parent) writeFileSync(join(placement.parent, 'beside.txt'), 'beside\n', { mode: 0o644 });
      // The server is a script beside the recipe, started by a relative path from the recipe's folder.
      const { result, model, events } = await run([callReply('mcp_shell_look', {}), terminateReply()], {
        tools: ['mcp_shell_look', 'terminate'],
        recipe: 'mcp_servers:\n  shell:\n    command: ./server.sh\nsandbox: { kind: bwrap }',
        files: { 'server.sh': lookingServer, 'notes.txt': 'launch-notes\n', 'private/secret.txt': 'secret\n' },
        modes: { private: 0o700 },
        ...placement,
      });
      expect(result.status, result.answer).toBe('success');
      expect(events.filter((event) => event.type === 'run-warning')).toEqual([]);
      expect(events.find((event) => event.type === 'mcp-server-ready')).toMatchObject({ place: 'bwrap' });
      const [notes, write, uid, secret, beside] = toolText(model.requests[1])[0].split(' ');
      expect(notes).toBe('launch-notes');
      expect(write).toBe('read-only');
      if (!asRoot) return;
      // A root runtime's sandbox drops to nobody, which sees only what the folder shows others.
      expect(uid).toBe('65534');
      expect(secret).toBe('unreadable');
      expect(beside).toBe('unreadable');
    });

    it('opens no folder outside the declaring file\'s own: a cwd that links to a private folder stays closed', async (context) => {
      const bwrap = await probeBwrap();
      if (!bwrap.usable || !asRoot) {
        console.log(`skipped: ${bwrap.usable ? 'only a root runtime drops to another user' : `bubblewrap is not usable here (${bwrap.reason})`}`);
        context.skip();
      }
      const elsewhere = privateFolder();
      writeFileSync(join(elsewhere, 'server.sh'), lookingServer, { mode: 0o755 });
      const { events } = await run([callReply('mcp_shell_look', {}), terminateReply()], {
        tools: ['mcp_shell_*', 'terminate'],
        recipe: `mcp_servers:\n  shell:\n    command: ./server.sh\n    cwd: elsewhere\nsandbox: { kind: bwrap }`,
        links: { elsewhere },
      });
      expect(events.find((event) => event.type === 'mcp-server-failed')?.reason).toMatch(/can't cd to \S*\/elsewhere/);
    });
  });

  const dockerPlaces = [['', undefined], [', also one only its owner may open (0700)', 0o700]] as const;
  for (const [where, folderMode] of dockerPlaces) it(`runs a recipe's stdio server in a Docker container of its own that sees the recipe's folder read-only${where}`, async (context) => {
    const docker = await probeDocker(dockerImage);
    if (!docker.available) {
      console.log(`skipped: no Docker daemon or image (${docker.reason})`);
      context.skip();
    }
    const recipe = `mcp_servers:\n  shell:\n    command: sh\n    args: [server.sh]\nsandbox: { kind: docker, image: "${dockerImage}" }`;
    const { result, model, events } = await run([
      callReply('mcp_shell_where', {}),
      terminateReply(),
    ], { tools: ['mcp_shell_where', 'terminate'], recipe, files: { 'server.sh': shellServer }, folderMode });
    expect(result.status, result.answer).toBe('success');
    expect(events.find((event) => event.type === 'mcp-server-ready')).toMatchObject({ place: 'docker' });
    // Inside a container (its own host name), as the sandbox's user, unable to write the recipe's folder.
    const [where, user, write] = toolText(model.requests[1])[0].split(' ');
    expect(where).not.toBe(hostname());
    expect(user).not.toBe('');
    expect(write).toBe('read-only');
    const leftovers = await listContainers(result.runId);
    expect(leftovers).toEqual([]);
  });
});

const dockerImage = sandboxDefaults.image;

/** An MCP server in plain sh, for an image that has neither Node nor Python's json module. */
const shellServer = [
  '#!/bin/sh',
  'while IFS= read -r line; do',
  '  id=$(printf \'%s\' "$line" | sed -n \'s/.*"id":\\([0-9]*\\).*/\\1/p\')',
  '  case "$line" in',
  '    *\'"method":"initialize"\'*) printf \'{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"shell","version":"1"}}}\\n\' "$id" ;;',
  '    *\'"method":"tools/list"\'*) printf \'{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"where","description":"Where it runs.","inputSchema":{"type":"object"}}]}}\\n\' "$id" ;;',
  '    *\'"method":"tools/call"\'*)',
  '      if touch probe 2>/dev/null; then write=writable; else write=read-only; fi',
  '      printf \'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s %s %s"}]}}\\n\' "$id" "$(cat /etc/hostname)" "$(id -u)" "$write" ;;',
  '  esac',
  'done',
  '',
].join('\n');

/**
 * An MCP server in plain sh whose one tool tells what it sees from its launch folder: a file there,
 * whether it can write there, its user, a file in a private folder there and one beside the folder.
 */
const lookingServer = shellServer
  .replace('"name":"where","description":"Where it runs."', '"name":"look","description":"What it sees."')
  .replace(
    /      printf .*\n/,
    [
      '      read_or() { cat "$1" 2>/dev/null || echo unreadable; }',
      '      printf \'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s %s %s %s %s"}]}}\\n\' "$id" "$(read_or notes.txt)" "$write" "$(id -u)" "$(read_or private/secret.txt)" "$(read_or ../beside.txt)" ;;',
      '',
    ].join('\n'),
  );

const scratchFolders: string[] = [];
afterAll(() => {
  for (const folder of scratchFolders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A folder inside the checkout, removed after the test file: wherever the checkout lies, so is it. */
function repositoryScratch(): string {
  const folder = join(repositoryRoot, 'test', 'artifacts', 'mcp-client');
  mkdirSync(folder, { recursive: true });
  const scratch = mkdtempSync(join(folder, 'run-'));
  scratchFolders.push(scratch);
  return scratch;
}

/** A folder only its owner may pass through, outside /tmp (mkdtemp makes it 0700). */
function privateFolder(): string {
  const folder = repositoryScratch();
  chmodSync(folder, 0o700);
  return folder;
}

/** The run's containers still present, by the label every sandbox container carries. */
async function listContainers(runId: string): Promise<string[]> {
  const { connectDocker } = await import('../runtime/services/sandbox/docker-connection.js');
  const containers = await (await connectDocker()).listContainers({ all: true });
  return containers.filter((container) => Object.values(container.Labels ?? {}).includes(runId)).map((container) => container.Id);
}


/** The published reference server over HTTP, on a free port. */
async function startTestHttpServer(mode: 'json' | 'sse'): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [testServer], { env: { ...process.env, MCP_TEST_HTTP: mode }, stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.on('exit', () => reject(new Error(`the test server exited: ${output}`)));
  });
  return { child, port };
}

async function startEverythingServer(mode: 'streamableHttp' | 'sse'): Promise<{ child: ChildProcess; port: number }> {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as AddressInfo;
      probe.close(() => resolve(free));
    });
  });
  const child = spawn(everythingServer, [mode], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/listening|running/i.test(output)) resolve();
    });
    child.on('exit', () => reject(new Error(`the everything server exited: ${output}`)));
  });
  return { child, port };
}
