import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import bash from '../plugins/bash.js';
import pythonExecute from '../plugins/python_execute.js';
import { BoundedOutput } from '../runtime/sandbox/bounded-output.js';
import { createSandbox } from '../runtime/sandbox/create-sandbox.js';
import { HostSandbox } from '../runtime/sandbox/host-sandbox.js';
import { readSandboxOptions } from '../runtime/sandbox/sandbox-options.js';
import type { Sandbox } from '../runtime/sandbox/sandbox-types.js';
import { SentinelSession } from '../runtime/sandbox/sentinel-session.js';
import { WorkspacePathError } from '../runtime/workspace-paths.js';
import type { ToolResult } from '../runtime/tool.js';
import { createTestToolContext } from './support/tool-context.js';
import { processIsGone } from './support/processes.js';

let root: string;
let workspace: string;
let sandbox: Sandbox;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-host-sandbox-')));
  workspace = join(root, 'workspace');
  mkdirSync(join(workspace, 'sub'), { recursive: true });
  sandbox = new HostSandbox(workspace, readSandboxOptions({}));
});

afterEach(async () => {
  await sandbox.dispose();
  rmSync(root, { recursive: true, force: true });
});

describe('host sandbox commands', () => {
  it('runs an argument vector and a shell string, with separate streams and the exit status', async () => {
    const vector = await sandbox.run(['python3', '-c', 'import sys; print("out"); print("err", file=sys.stderr); sys.exit(4)'], {
      timeoutMs: 10_000,
    });
    expect(vector.stdout.toString()).toBe('out\n');
    expect(vector.stderr.toString()).toBe('err\n');
    expect(vector).toMatchObject({ exitCode: 4, signal: null, timedOut: false, aborted: false });
    const shell = await sandbox.run('echo "$((6 * 7))" | tr 4 X', { timeoutMs: 10_000 });
    expect(shell.stdout.toString()).toBe('X2\n');
    expect(shell.exitCode).toBe(0);
  });

  it('runs in the workspace or a folder inside it, and refuses folders outside', async () => {
    expect((await sandbox.run('pwd', { timeoutMs: 10_000 })).stdout.toString()).toBe(`${workspace}\n`);
    expect((await sandbox.run('pwd', { cwd: 'sub', timeoutMs: 10_000 })).stdout.toString()).toBe(`${join(workspace, 'sub')}\n`);
    await expect(sandbox.run('pwd', { cwd: '..', timeoutMs: 10_000 })).rejects.toBeInstanceOf(WorkspacePathError);
    await expect(sandbox.run('pwd', { cwd: 'missing', timeoutMs: 10_000 })).rejects.toThrow('is not a folder in the workspace');
  });

  it('feeds standard input and closes it', async () => {
    const result = await sandbox.run(['sort'], { stdin: 'pear\napple\n', timeoutMs: 10_000 });
    expect(result.stdout.toString()).toBe('apple\npear\n');
  });

  it('reports a program that does not exist like a shell does', async () => {
    const result = await sandbox.run(['no-such-program-here'], { timeoutMs: 10_000 });
    expect(result.exitCode).toBe(127);
    expect(result.stderr.toString()).toContain('no-such-program-here');
  });

  it('passes only a built environment, plus variables named in pass_env', async () => {
    process.env.MANUS_SANDBOX_TEST_SECRET = 'do-not-leak';
    try {
      const isolated = await sandbox.run('echo "[${MANUS_SANDBOX_TEST_SECRET:-}] $TERM"', { timeoutMs: 10_000 });
      expect(isolated.stdout.toString()).toBe('[] dumb\n');
      const passing = new HostSandbox(workspace, readSandboxOptions({ pass_env: ['MANUS_SANDBOX_TEST_SECRET'] }));
      const passed = await passing.run('echo "[$MANUS_SANDBOX_TEST_SECRET] [$EXTRA]"', { timeoutMs: 10_000, env: { EXTRA: 'call' } });
      expect(passed.stdout.toString()).toBe('[do-not-leak] [call]\n');
    } finally {
      delete process.env.MANUS_SANDBOX_TEST_SECRET;
    }
  });

  it('on timeout kills the process group, background children included', async () => {
    const started = Date.now();
    const result = await sandbox.run('sleep 300 & echo $! > background.pid; echo started; sleep 300', { timeoutMs: 800 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL' });
    expect(result.stdout.toString()).toBe('started\n');
    const backgroundPid = Number(readFileSync(join(workspace, 'background.pid'), 'utf8'));
    await expect.poll(() => processIsGone(backgroundPid), { timeout: 3000 }).toBe(true);
  });

  it('kills what a command left running once it exits', async () => {
    const result = await sandbox.run('sleep 300 & echo $!', { timeoutMs: 10_000 });
    expect(result.exitCode).toBe(0);
    const backgroundPid = Number(result.stdout.toString());
    await expect.poll(() => processIsGone(backgroundPid), { timeout: 3000 }).toBe(true);
  });

  it('stops when the signal aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const result = await sandbox.run('sleep 300', { timeoutMs: 60_000, signal: controller.signal });
    expect(result).toMatchObject({ aborted: true, timedOut: false, signal: 'SIGKILL' });
  });

  it('keeps only the head and tail of huge output in memory', async () => {
    const result = await sandbox.run('head -c 3000000 /dev/zero | tr "\\0" a; echo; echo END', { timeoutMs: 20_000, outputLimitBytes: 1000 });
    const text = result.stdout.toString();
    expect(result.omittedBytes.stdout).toBe(3_000_005 - 1000);
    expect(text.startsWith('a'.repeat(500))).toBe(true);
    expect(text.endsWith('a\nEND\n')).toBe(true);
    expect(text).toContain(`[... ${3_000_005 - 1000} bytes of output omitted ...]`);
  });
});

describe('host sandbox sessions', () => {
  it('keeps a shell between requests and kills it with everything it started', async () => {
    const session = new SentinelSession(await sandbox.spawnSession(['bash', '--noprofile', '--norc']));
    const exchange = (input: string) =>
      session.exchange(`${input}\nprintf '\\n%s %d\\n' MARK-1 $?\n`, 'MARK-1', { timeoutMs: 5000, markedStreams: ['stdout'] });
    const first = await exchange('cd sub; value=7; sleep 300 & echo $! > ../background.pid');
    expect(first.status).toBe(0);
    const second = await exchange('echo "$PWD $value"; false');
    expect(second.stdout.toString()).toBe(`${join(workspace, 'sub')} 7\n`);
    expect(second.status).toBe(1);
    await session.kill();
    expect(session.running).toBe(false);
    const backgroundPid = Number(readFileSync(join(workspace, 'background.pid'), 'utf8'));
    await expect.poll(() => processIsGone(backgroundPid), { timeout: 3000 }).toBe(true);
  });

  it('finds a marker split across chunks', async () => {
    const session = new SentinelSession(await sandbox.spawnSession(['bash', '--noprofile', '--norc']));
    const script = `printf 'partial'; sleep 0.2; printf '\\nMAR'; sleep 0.2; printf 'KER-2 3'; sleep 0.2; printf '\\nlater\\n'\n`;
    const result = await session.exchange(script, 'MARKER-2', { timeoutMs: 5000, markedStreams: ['stdout'] });
    expect(result.stdout.toString()).toBe('partial');
    expect(result.status).toBe(3);
    await session.kill();
  });
});

describe('bounded output', () => {
  it('keeps everything under the limit and head and tail over it', () => {
    const small = new BoundedOutput(10);
    small.write(Buffer.from('abc'));
    small.write(Buffer.from('def'));
    expect(small.toBuffer().toString()).toBe('abcdef');
    const large = new BoundedOutput(6);
    for (const piece of ['ab', 'cd', 'ef', 'gh', 'ij']) large.write(Buffer.from(piece));
    expect(large.omittedBytes).toBe(4);
    expect(large.toBuffer().toString()).toBe('abc\n[... 4 bytes of output omitted ...]\nhij');
  });
});

describe('limits on the host: an infinite loop', () => {
  it('is stopped by the timeout and reported as an error by both tools', async () => {
    const created = createTestToolContext({ sandboxSettings: async () => ({ kind: 'host', network: false, options: {} }) });
    try {
      const python = (await pythonExecute.execute({ code: 'while True:\n    pass', timeout: 1 }, created.context)) as ToolResult;
      expect(python.isError).toBe(true);
      expect(python.content).toContain('[Timed out after 1 s');
      const shell = (await bash.execute({ command: 'while :; do :; done', timeout: 1 }, created.context)) as ToolResult;
      expect(shell.isError).toBe(true);
      expect(shell.content).toContain('[Timed out after 1 s');
    } finally {
      await created.dispose();
      rmSync(created.root, { recursive: true, force: true });
    }
  });
});

describe('createSandbox', () => {
  it('builds the host sandbox and checks options', async () => {
    const made = await createSandbox({ kind: 'host', network: false, options: {}, workspace, runDirectory: root, runId: 'r1' });
    expect(made.kind).toBe('host');
    expect(made.workspacePath).toBe(workspace);
    await made.dispose();
    await expect(
      createSandbox({ kind: 'host', network: false, options: { memory_mb: 'lots' }, workspace, runDirectory: root, runId: 'r1' }),
    ).rejects.toThrow('sandbox.memory_mb must be a positive integer');
    expect(() => readSandboxOptions({ user: '0:0' })).toThrow('must not be root');
    expect(readSandboxOptions({ user: '1000' }).user).toEqual({ uid: 1000, gid: 1000 });
  });
});

describe('host sandbox disposal', () => {
  it('kills sessions that are still running', async () => {
    writeFileSync(join(workspace, 'keep.txt'), 'x');
    const session = await sandbox.spawnSession(['sleep', '300']);
    await sandbox.dispose();
    expect(session.running).toBe(false);
    expect(await session.exited).toEqual({ exitCode: null, signal: 'SIGKILL' });
  });
});
