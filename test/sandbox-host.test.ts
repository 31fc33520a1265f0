import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import bash from '../plugins/code/bash.js';
import pythonExecute from '../plugins/code/python_execute.js';
import { BoundedOutput } from '../runtime/contract/bounded-output.js';
import { createSandbox } from '../runtime/services/sandbox/create-sandbox.js';
import { probeHostContainment } from '../runtime/services/sandbox/host-containment.js';
import { HostSandbox } from '../runtime/services/sandbox/host-sandbox.js';
import { killLeftoverProcesses, processStartTime } from '../runtime/services/sandbox/process-records.js';
import { readSandboxOptions } from '../runtime/services/sandbox/sandbox-options.js';
import type { Sandbox } from '../runtime/contract/sandbox-types.js';
import { SentinelSession } from '../runtime/services/sandbox/sentinel-session.js';
import { WorkspacePathError } from '../runtime/services/workspace-paths.js';
import type { ToolResult } from '../runtime/contract/tool.js';
import { runScripted, terminate, writeLoopFixture } from './support/loop-fixture.js';
import { memoryHogsCommand, processesThatHeld } from './support/memory-hogs.js';
import { processesWithArgument, processIsGone } from './support/processes.js';
import { readEvents, repositoryRoot, runCli } from './support/run-cli.js';
import { startScriptedModelServer } from './support/scripted-model-server.js';
import { createTestToolContext } from './support/tool-context.js';

let root: string;
let workspace: string;
let sandbox: Sandbox;

beforeEach(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-host-sandbox-')));
  workspace = join(root, 'workspace');
  mkdirSync(join(workspace, 'sub'), { recursive: true });
  sandbox = await HostSandbox.create({ workspace, runDirectory: root, options: readSandboxOptions({}) });
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
      const passing = await HostSandbox.create({ workspace, options: readSandboxOptions({ pass_env: ['MANUS_SANDBOX_TEST_SECRET'] }) });
      const passed = await passing.run('echo "[$MANUS_SANDBOX_TEST_SECRET] [$EXTRA]"', { timeoutMs: 10_000, env: { EXTRA: 'call' } });
      expect(passed.stdout.toString()).toBe('[do-not-leak] [call]\n');
    } finally {
      delete process.env.MANUS_SANDBOX_TEST_SECRET;
    }
  });

  it('on timeout kills the process group, background children included', async () => {
    const marker = uniqueSleepArgument();
    const started = Date.now();
    const result = await sandbox.run(`sleep ${marker} & echo started; sleep 300`, { timeoutMs: 800 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL' });
    expect(result.stdout.toString()).toBe('started\n');
    await expect.poll(() => processesWithArgument(marker), { timeout: 3000 }).toEqual([]);
  });

  it('kills what a command left running once it exits', async () => {
    const marker = uniqueSleepArgument();
    const result = await sandbox.run(`sleep ${marker} & echo started`, { timeoutMs: 10_000 });
    expect(result.exitCode).toBe(0);
    await expect.poll(() => processesWithArgument(marker), { timeout: 3000 }).toEqual([]);
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
    const marker = uniqueSleepArgument();
    const first = await exchange(`cd sub; value=7; sleep ${marker} &`);
    expect(first.status).toBe(0);
    const second = await exchange('echo "$PWD $value"; false');
    expect(second.stdout.toString()).toBe(`${join(workspace, 'sub')} 7\n`);
    expect(second.status).toBe(1);
    expect(processesWithArgument(marker)).toHaveLength(1);
    await session.kill();
    expect(session.running).toBe(false);
    await expect.poll(() => processesWithArgument(marker), { timeout: 3000 }).toEqual([]);
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

const containment = await probeHostContainment();
const namespaceSkipReason = containment.namespace ? '' : `host PID-namespace tests skipped: ${containment.gaps[0]}`;
if (namespaceSkipReason) console.warn(namespaceSkipReason);
const hasPython = spawnSync('python3', ['--version']).status === 0;
if (!hasPython) console.warn('host sandbox: python3 is missing, so start_new_session children are not tried');

function uniqueSleepArgument(): string {
  return `300.${randomBytes(3).readUIntBE(0, 3)}`;
}

/**
 * Starts `sleep <marker>` in a new session, out of the command's process group (with setsid, and
 * from Python with start_new_session), writes `ready`, then runs `then`.
 */
function escapingCommand(marker: string, then: string): string {
  const python = hasPython ? `python3 -c "import subprocess; subprocess.Popen(['sleep', '${marker}'], start_new_session=True)"; ` : '';
  return `setsid sleep ${marker} & ${python}touch ready; ${then}`;
}

const escapees = hasPython ? 2 : 1;

describe.skipIf(!containment.namespace)('host commands in their own PID namespace', () => {
  it('see only their own processes, not the runtime', async () => {
    const result = await sandbox.run(`cat /proc/${process.pid}/environ; ls /proc | grep -c '^[0-9]'`, { timeoutMs: 10_000 });
    expect(result.stderr.toString()).toContain('No such file or directory');
    expect(Number(result.stdout.toString().trim())).toBeLessThan(10);
  });

  it('leave nothing behind when they exit, processes in new sessions included, and are recorded while they run', async () => {
    const marker = uniqueSleepArgument();
    const running = sandbox.run(escapingCommand(marker, 'while [ ! -e go ]; do sleep 0.05; done; echo finished'), { timeoutMs: 30_000 });
    await expect.poll(() => processesWithArgument(marker).length, { timeout: 10_000 }).toBe(escapees);
    const recordsFile = join(root, 'processes.json');
    await expect.poll(() => existsSync(recordsFile) && JSON.parse(readFileSync(recordsFile, 'utf8')).commands[0].namespaceInit !== undefined, { timeout: 5000 }).toBe(true);
    const [command] = JSON.parse(readFileSync(recordsFile, 'utf8')).commands;
    expect(command.processGroup.startTime).toBe(processStartTime(command.processGroup.pid));
    writeFileSync(join(workspace, 'go'), '');
    const result = await running;
    expect(result).toMatchObject({ exitCode: 0, signal: null });
    expect(result.stdout.toString()).toBe('finished\n');
    await expect.poll(() => processesWithArgument(marker), { timeout: 3000 }).toEqual([]);
    expect(existsSync(recordsFile)).toBe(false);
  });

  it('leave nothing behind on timeout', async () => {
    const marker = uniqueSleepArgument();
    const result = await sandbox.run(escapingCommand(marker, 'sleep 300'), { timeoutMs: 2000 });
    expect(result).toMatchObject({ timedOut: true, signal: 'SIGKILL' });
    expect(existsSync(join(workspace, 'ready'))).toBe(true);
    await expect.poll(() => processesWithArgument(marker), { timeout: 3000 }).toEqual([]);
  });

  it('leave nothing behind on abort', async () => {
    const marker = uniqueSleepArgument();
    const controller = new AbortController();
    const running = sandbox.run(escapingCommand(marker, 'sleep 300'), { timeoutMs: 60_000, signal: controller.signal });
    await expect.poll(() => processesWithArgument(marker).length, { timeout: 10_000 }).toBe(escapees);
    controller.abort();
    expect(await running).toMatchObject({ aborted: true, signal: 'SIGKILL' });
    await expect.poll(() => processesWithArgument(marker), { timeout: 3000 }).toEqual([]);
  });

  it('leave nothing behind when a session is killed', async () => {
    const marker = uniqueSleepArgument();
    const session = new SentinelSession(await sandbox.spawnSession(['bash', '--noprofile', '--norc']));
    await session.exchange(`${escapingCommand(marker, 'true')}\nprintf '\\n%s %d\\n' MARK-3 $?\n`, 'MARK-3', { timeoutMs: 10_000, markedStreams: ['stdout'] });
    await expect.poll(() => processesWithArgument(marker).length, { timeout: 10_000 }).toBe(escapees);
    await session.kill();
    await expect.poll(() => processesWithArgument(marker), { timeout: 3000 }).toEqual([]);
  });

  it('report a command killed by a signal like a host process', async () => {
    const result = await sandbox.run('kill -TERM $$', { timeoutMs: 10_000 });
    expect(result).toMatchObject({ exitCode: null, signal: 'SIGTERM' });
  });
});

// A runtime process of its own, made from the kernel's source: the sandbox is not part of the public API.
const sandboxModule = join(repositoryRoot, 'runtime', 'services', 'sandbox', 'create-sandbox.ts');
const loadTypeScript = ['--import', pathToFileURL(join(repositoryRoot, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href];

describe.skipIf(!containment.namespace || !containment.parentDeathSignal)('a host runtime killed with SIGKILL', () => {
  it('takes every process its commands started with it', async () => {
    const marker = uniqueSleepArgument();
    const script = join(root, 'runtime.mjs');
    writeFileSync(script, [
      `import { createSandbox } from ${JSON.stringify(sandboxModule)};`,
      'const [workspace, runDirectory, command] = process.argv.slice(2);',
      "const sandbox = await createSandbox({ kind: 'host', network: false, options: {}, workspace, runDirectory, runId: 'killed' });",
      'await sandbox.run(command, { timeoutMs: 600_000 });',
    ].join('\n'));
    const runtime = spawn(process.execPath, [...loadTypeScript, script, workspace, root, escapingCommand(marker, `sleep ${marker}`)], { stdio: 'ignore' });
    try {
      await expect.poll(() => processesWithArgument(marker).length, { timeout: 20_000 }).toBe(escapees + 1);
      runtime.kill('SIGKILL');
      await expect.poll(() => processesWithArgument(marker), { timeout: 3000 }).toEqual([]);
    } finally {
      runtime.kill('SIGKILL');
    }
  });
});

const cgroupSkipReason = containment.cgroups ? '' : `host cgroup limit tests skipped: ${containment.gaps.find((gap) => gap.includes('no memory or process limits'))}`;
if (cgroupSkipReason) console.warn(cgroupSkipReason);

describe.skipIf(!containment.cgroups || !hasPython)('host commands of a root runtime', () => {
  it('are held to memory_mb as a whole: four processes of 600 MB under 1024 cannot all hold theirs', async () => {
    const limited = await HostSandbox.create({ workspace, runDirectory: root, options: readSandboxOptions({ memory_mb: 1024 }) });
    try {
      const result = await limited.run(memoryHogsCommand(600), { timeoutMs: 60_000 });
      expect(processesThatHeld(result.stdout.toString()), result.stdout.toString() + result.stderr.toString()).toBeLessThan(2);
    } finally {
      await limited.dispose();
    }
  });

  it('are held to memory_mb and pids by a cgroup of their own, which is removed after them', async () => {
    const limited = await HostSandbox.create({ workspace, runDirectory: root, options: readSandboxOptions({ memory_mb: 64, pids: 16 }) });
    try {
      const memory = await limited.run(['python3', '-c', 'b = bytearray(256 * 1024 * 1024); print("allocated")'], { timeoutMs: 30_000 });
      expect(memory.stdout.toString()).not.toContain('allocated');
      expect(memory.exitCode).not.toBe(0);
      const forks = await limited.run(
        ['python3', '-c', [
          'import subprocess',
          'children = []',
          'try:',
          '    for _ in range(40): children.append(subprocess.Popen(["sleep", "30"]))',
          'except OSError as error: print("refused", error.errno)',
        ].join('\n')],
        { timeoutMs: 30_000 },
      );
      expect(forks.stdout.toString()).toMatch(/^refused /);
      for (const parent of containment.cgroups!.parents) {
        expect(readdirSync(parent).filter((name) => name.startsWith(`manus-${process.pid}-`))).toEqual([]);
      }
    } finally {
      await limited.dispose();
    }
  });
});

const unprivileged = { uid: 65534, gid: 65534 };
const asUnprivileged = (...argv: string[]) => spawnSync('setpriv', [`--reuid=${unprivileged.uid}`, `--regid=${unprivileged.gid}`, '--clear-groups', ...argv]).status === 0;
const unprivilegedNamespaces = process.getuid?.() === 0 && asUnprivileged('unshare', '--user', '--map-current-user', '--pid', '--fork', 'true');
if (!unprivilegedNamespaces) console.warn('the unprivileged host runtime test is skipped: it needs a root test run and user namespaces for other users');
// The runtime it starts is this checkout's: in a folder only root may pass (root's home), that user cannot load it.
const checkoutReadable = unprivilegedNamespaces && asUnprivileged('test', '-r', sandboxModule);
if (unprivilegedNamespaces && !checkoutReadable) console.warn(`the unprivileged host runtime test is skipped: user ${unprivileged.uid} cannot read this checkout (${repositoryRoot})`);

describe.skipIf(!checkoutReadable)('an unprivileged host runtime', () => {
  it('contains its commands in a user and PID namespace, as itself', async () => {
    const marker = uniqueSleepArgument();
    const folder = mkdtempSync(join(tmpdir(), 'manus-unprivileged-'));
    chownSync(folder, unprivileged.uid, unprivileged.gid);
    const script = join(folder, 'runtime.mjs');
    writeFileSync(script, [
      `import { createSandbox } from ${JSON.stringify(sandboxModule)};`,
      'const [folder, command] = process.argv.slice(2);',
      "const sandbox = await createSandbox({ kind: 'host', network: false, options: {}, workspace: folder, runDirectory: folder, runId: 'unprivileged' });",
      'const result = await sandbox.run(command, { timeoutMs: 30_000 });',
      'process.stdout.write(result.stdout);',
      'await sandbox.dispose();',
    ].join('\n'));
    try {
      const result = spawnSync(process.execPath, [...loadTypeScript, script, folder, `setsid sleep ${marker} & id -u; ls /proc | grep -c '^[0-9]'`], {
        ...unprivileged,
        encoding: 'utf8',
        timeout: 30_000,
      });
      const [uid, processes] = result.stdout.trim().split('\n');
      expect(uid).toBe(String(unprivileged.uid));
      expect(Number(processes)).toBeLessThan(10);
      await expect.poll(() => processesWithArgument(marker), { timeout: 3000 }).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('leftover host commands', () => {
  /** A detached `sleep`: its own process group, as a host command has. */
  function startGroup(marker: string): number {
    const child = spawn('sleep', [marker], { detached: true, stdio: 'ignore' });
    child.unref();
    return child.pid!;
  }

  function writeRecords(runDirectory: string, runtime: { pid: number; startTime: string }, groups: Array<{ pid: number; startTime: string }>): string {
    mkdirSync(runDirectory, { recursive: true });
    const file = join(runDirectory, 'processes.json');
    const records = { version: 1, runtime: { ...runtime, host: hostname() }, commands: groups.map((group) => ({ processGroup: group })) };
    writeFileSync(file, JSON.stringify(records));
    return file;
  }

  /** A runtime that has ended: this pid with a start time it does not have. */
  const deadRuntime = { pid: process.pid, startTime: '1' };

  it('are killed when their runtime is gone and their start time matches; a reused pid and a live run are left alone', async () => {
    const runs = join(root, 'runs');
    const leftover = startGroup(uniqueSleepArgument());
    const reused = startGroup(uniqueSleepArgument());
    const ofLiveRun = startGroup(uniqueSleepArgument());
    try {
      const deadFile = writeRecords(join(runs, 'killed-run'), deadRuntime, [
        { pid: leftover, startTime: processStartTime(leftover)! },
        // The pid was given to another process since: its start time differs.
        { pid: reused, startTime: String(BigInt(processStartTime(reused)!) - 1n) },
      ]);
      const liveFile = writeRecords(join(runs, 'live-run'), { pid: process.pid, startTime: processStartTime(process.pid)! }, [
        { pid: ofLiveRun, startTime: processStartTime(ofLiveRun)! },
      ]);
      const cleanup = killLeftoverProcesses(runs);
      expect(cleanup).toEqual({ killed: [leftover], skipped: [liveFile] });
      await expect.poll(() => processIsGone(leftover), { timeout: 3000 }).toBe(true);
      expect(processIsGone(reused)).toBe(false);
      expect(processIsGone(ofLiveRun)).toBe(false);
      expect(existsSync(deadFile)).toBe(false);
      expect(existsSync(liveFile)).toBe(true);
    } finally {
      for (const pid of [leftover, reused, ofLiveRun]) killGroup(pid);
    }
  });

  it('are killed by the next manus run, which records it', async () => {
    const fixture = writeLoopFixture({ tools: ['terminate'] });
    const leftover = startGroup(uniqueSleepArgument());
    try {
      writeRecords(join(fixture, '.manus', 'runs', 'killed-run'), deadRuntime, [{ pid: leftover, startTime: processStartTime(leftover)! }]);
      const run = await runScripted([terminate('done')], { fixture, args: ['--ci'] });
      expect(run.exitCode).toBe(0);
      expect(processIsGone(leftover)).toBe(true);
      expect(readEvents(run.json.runDirectory).find((event) => event.type === 'sandbox-cleanup')).toMatchObject({ killedProcesses: [leftover] });
      expect(existsSync(join(fixture, '.manus', 'runs', 'killed-run', 'processes.json'))).toBe(false);
    } finally {
      killGroup(leftover);
      rmSync(fixture, { recursive: true, force: true });
    }
  });

  it('in the run folder itself are killed by manus resume', async () => {
    const fixture = writeLoopFixture({ tools: ['terminate'] });
    const leftover = startGroup(uniqueSleepArgument());
    const server = await startScriptedModelServer({ turns: [terminate('not yet', 'failure'), terminate('done after resume')] });
    try {
      const environment = { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model' };
      const first = await runCli(['run', 'recipe.yaml', '--json', '--ci'], { cwd: fixture, env: environment });
      expect(first.exitCode).toBe(1);
      writeRecords(first.json.runDirectory, deadRuntime, [{ pid: leftover, startTime: processStartTime(leftover)! }]);
      const resumed = await runCli(['resume', first.json.runId, '--json', '--ci'], { cwd: fixture, env: environment });
      expect(resumed.exitCode).toBe(0);
      expect(processIsGone(leftover)).toBe(true);
      expect(readEvents(first.json.runDirectory).find((event) => event.type === 'sandbox-cleanup')).toMatchObject({ killedProcesses: [leftover] });
    } finally {
      killGroup(leftover);
      await server.close();
      rmSync(fixture, { recursive: true, force: true });
    }
  });
});

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
