/**
 * What users see of MCP servers through the built command: `--mcp`, `manus mcp list`, the exit
 * code of a lost required server, and no server left running after the runtime is SIGKILLed.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { processesWithArgument } from './support/processes.js';
import { cliEntry, makeFixture, repositoryRoot, runCli } from './support/run-cli.js';
import { startScriptedModelServer, type ScriptedTurn } from './support/scripted-model-server.js';

const testServer = join(repositoryRoot, 'test', 'support', 'mcp-test-server.mjs');

function fixture(recipeExtra = '', tools = '[terminate]'): string {
  return makeFixture({
    'recipe.yaml': `version: 1\nname: mcp-test\nprompt: Do the task.\nagent:\n  tools: ${tools}\n${recipeExtra}\n`,
    'agents.yaml': 'version: 1\nllm:\n  default:\n    retry: { base_delay_ms: 5, max_delay_ms: 50 }\n',
  });
}

async function withModel<T>(turns: ScriptedTurn[], body: (environment: Record<string, string>) => Promise<T>): Promise<T> {
  const server = await startScriptedModelServer({ turns });
  try {
    return await body({ OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model' });
  } finally {
    await server.close();
  }
}

const call = (name: string, input: unknown = {}): ScriptedTurn => ({ toolCalls: [{ name, arguments: input }] });
const finish: ScriptedTurn = call('terminate', { status: 'success', message: 'done' });

describe('manus run --mcp', () => {
  it('adds a server for one run, with all its tools', async () => {
    const folder = fixture();
    await withModel([call('mcp_extra_echo', { text: 'flag' }), finish], async (environment) => {
      const result = await runCli(['run', 'recipe.yaml', '--json', '--mcp', `extra=node ${testServer}`], { cwd: folder, env: environment });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.json.status).toBe('success');
    });
  });

  it('rejects a malformed --mcp with exit code 2', async () => {
    const result = await runCli(['run', 'recipe.yaml', '--mcp', 'no-command'], { cwd: fixture() });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--mcp expects name=command');
  });

  it('exits with code 6 when a required server cannot start', async () => {
    const folder = fixture('mcp_servers:\n  gone:\n    command: ./missing-server\n    required: true', '[mcp_gone_*, terminate]');
    await withModel([finish], async (environment) => {
      const result = await runCli(['run', 'recipe.yaml', '--json', '--trust', 'mcp'], { cwd: folder, env: environment });
      expect(result.exitCode).toBe(6);
      expect(result.json.error.code).toBe('tool_source_unavailable');
      expect(result.stderr + result.stdout).toContain("the MCP server 'gone' could not be started");
    });
  });

  it('exits with code 6 when a server cannot start whose tools the agent names one by one, required or not', async () => {
    const folder = fixture('mcp_servers:\n  gone:\n    command: ./missing-server', '[mcp_gone_read_file, terminate]');
    await withModel([finish], async (environment) => {
      const result = await runCli(['run', 'recipe.yaml', '--json', '--trust', 'mcp'], { cwd: folder, env: environment });
      expect(result.exitCode, result.stderr).toBe(6);
      expect(result.json.error.code).toBe('tool_source_unavailable');
      expect(result.stderr + result.stdout).toContain("the MCP server 'gone' could not be started");
    });
  });

  it('goes on without a server that cannot start when the agent takes whatever tools it has', async () => {
    const folder = fixture('mcp_servers:\n  gone:\n    command: ./missing-server', '[mcp_gone_*, terminate]');
    await withModel([finish], async (environment) => {
      const result = await runCli(['run', 'recipe.yaml', '--json', '--trust', 'mcp'], { cwd: folder, env: environment });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stderr).toContain("the MCP server 'gone' could not be started, so the run goes on without its tools");
    });
  });
});

describe('manus replay of a run with MCP tools', () => {
  it('gives the recorded results without starting the server', async () => {
    const folder = fixture(`mcp_servers:\n  test:\n    command: node\n    args: [${JSON.stringify(testServer)}]`, '[mcp_test_echo, terminate]');
    await withModel([call('mcp_test_echo', { text: 'recorded' }), finish], async (environment) => {
      const recorded = await runCli(['run', 'recipe.yaml', '--json', '--trust', 'mcp', '--record', 'run.jsonl'], { cwd: folder, env: environment });
      expect(recorded.exitCode, recorded.stderr).toBe(0);
    });
    const replayed = await runCli(['replay', 'run.jsonl', '--json'], { cwd: folder });
    expect(replayed.exitCode, replayed.stderr).toBe(0);
    expect(replayed.stderr).toContain('echo: recorded');
  });
});

describe('manus mcp list', () => {
  it('starts the declared servers and prints their tools and schemas', async () => {
    const folder = fixture(`mcp_servers:\n  test:\n    command: node\n    args: [${JSON.stringify(testServer)}]\n    tools: { allow: [echo, fail] }`);
    const result = await runCli(['mcp', 'list', 'recipe.yaml', '--json', '--trust', 'mcp'], { cwd: folder });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.json).toEqual([{
      server: 'test',
      place: 'host',
      tools: [
        expect.objectContaining({ name: 'mcp_test_echo', description: 'Echoes the text back.', parameters: expect.objectContaining({ required: ['text'] }) }),
        expect.objectContaining({ name: 'mcp_test_fail' }),
      ],
    }]);
    const text = await runCli(['mcp', 'list', 'recipe.yaml', '--trust', 'mcp'], { cwd: folder });
    expect(text.stdout).toContain('test (host): 2 tool(s)');
    expect(text.stdout).toContain('mcp_test_echo');
  });
});

describe('after a SIGKILL of the runtime', () => {
  it('leaves no MCP server running', async () => {
    const marker = `marker-${randomBytes(4).toString('hex')}`;
    const folder = fixture(`mcp_servers:\n  test:\n    command: node\n    args: [${JSON.stringify(testServer)}, ${marker}]`, '[mcp_test_*, terminate]');
    await withModel([{ content: 'thinking', delayMs: 30_000 }], async (environment) => {
      const child = spawn(process.execPath, [cliEntry, 'run', 'recipe.yaml', '--trust', 'mcp'], {
        cwd: folder,
        env: { PATH: process.env.PATH, NO_COLOR: '1', XDG_CONFIG_HOME: join(folder, 'no-config'), ...environment },
      });
      const closed = new Promise((resolve) => child.on('close', resolve));
      for (let attempt = 0; attempt < 200 && processesWithArgument(marker).length === 0; attempt += 1) await delay(50);
      expect(processesWithArgument(marker).length).toBeGreaterThan(0);
      child.kill('SIGKILL');
      await closed;
      // Contained servers die with the runtime; anything left is killed by the next run's start.
      for (let attempt = 0; attempt < 40 && processesWithArgument(marker).length > 0; attempt += 1) await delay(50);
      if (processesWithArgument(marker).length > 0) {
        await runCli(['run', 'recipe.yaml', '--json'], { cwd: folder, env: environment });
      }
      expect(processesWithArgument(marker)).toEqual([]);
    });
  });
});
