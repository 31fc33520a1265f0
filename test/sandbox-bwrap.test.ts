import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import bash from '../plugins/code/bash.js';
import pythonExecute from '../plugins/code/python_execute.js';
import { BwrapSandbox } from '../runtime/services/sandbox/bwrap-sandbox.js';
import { chooseAutoSandbox } from '../runtime/services/sandbox/auto-sandbox.js';
import { probeBwrap } from '../runtime/services/sandbox/create-sandbox.js';
import { readSandboxOptions } from '../runtime/services/sandbox/sandbox-options.js';
import type { Sandbox } from '../runtime/contract/sandbox-types.js';
import type { ToolResult } from '../runtime/contract/tool.js';
import { createTestToolContext } from './support/tool-context.js';
import { memoryHogsCommand, processesThatHeld } from './support/memory-hogs.js';
import { processesWithArgument } from './support/processes.js';
import { probeCgroups } from '../runtime/services/sandbox/host-cgroups.js';

const availability = await probeBwrap();
const skipReason = availability.usable ? '' : `bwrap sandbox tests skipped: ${availability.reason}`;
if (skipReason) console.warn(skipReason);
const runningAsRoot = process.getuid?.() === 0;

/** Network interfaces of the caller's network namespace (/sys would show the host's). */
const listInterfaces = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '";

function countProcesses(): number {
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).length;
}

/** A duration for `sleep` that no other process on the machine uses, to find the sleeper later. */
function uniqueSleepArgument(): string {
  return `3000.${randomBytes(3).readUIntBE(0, 3)}`;
}

describe.skipIf(!availability.usable)('bwrap sandbox', () => {
  let root: string;
  let workspace: string;
  let sandbox: Sandbox;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = createServer((socket) => socket.end('hello from the host\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  beforeEach(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-bwrap-sandbox-')));
    workspace = join(root, 'workspace');
    mkdirSync(workspace);
    sandbox = await BwrapSandbox.create({ workspace, network: false, options: readSandboxOptions({}) });
  });

  afterEach(async () => {
    await sandbox.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  const connectScript = (target: number) =>
    `import socket\ntry:\n    print(socket.create_connection(("127.0.0.1", ${target}), timeout=3).recv(100).decode().strip())\nexcept OSError as error:\n    print("refused:", error)`;

  it('has no network: a server on the host loopback cannot be reached', async () => {
    const inside = await sandbox.run(['python3', '-c', connectScript(port)], { timeoutMs: 15_000 });
    expect(inside.stdout.toString()).toMatch(/^refused:/);
    const interfaces = await sandbox.run(listInterfaces, { timeoutMs: 10_000 });
    expect(interfaces.stdout.toString()).toBe('lo\n');
  });

  it('shares the host network when network is true', async () => {
    const networked = await BwrapSandbox.create({ workspace, network: true, options: readSandboxOptions({}) });
    try {
      const result = await networked.run(['python3', '-c', connectScript(port)], { timeoutMs: 15_000 });
      expect(result.stdout.toString()).toBe('hello from the host\n');
    } finally {
      await networked.dispose();
    }
  });

  it('sees the root file system read-only, the host home included', async () => {
    const home = homedir();
    const probeName = `manus-bwrap-probe-${randomBytes(4).toString('hex')}`;
    const result = await sandbox.run(
      ['sh', '-c', 'touch /etc/"$1" 2>/dev/null && echo etc-written; touch "$2"/"$1" 2>/dev/null && echo home-written; echo checked', 'sh', probeName, home],
      { timeoutMs: 10_000 },
    );
    expect(result.stdout.toString()).toBe('checked\n');
    expect(existsSync(join('/etc', probeName))).toBe(false);
    expect(existsSync(join(home, probeName))).toBe(false);
  });

  it('writes to the workspace at the same path, visible on the host', async () => {
    const result = await sandbox.run('pwd; mkdir -p out && echo made > out/file.txt', { timeoutMs: 10_000 });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.toString()).toBe(`${workspace}\n`);
    expect(readFileSync(join(workspace, 'out', 'file.txt'), 'utf8')).toBe('made\n');
    // What the command made belongs to the workspace's owner afterwards, not to the sandbox's user.
    const owner = statSync(workspace).uid;
    expect(owner).not.toBe(65534);
    for (const path of ['out', 'out/file.txt']) expect(statSync(join(workspace, path)).uid, path).toBe(owner);
  });

  it('makes files the host writes later writable inside', async () => {
    writeFileSync(join(workspace, 'from-host.txt'), 'host\n');
    const result = await sandbox.run('echo sandbox >> from-host.txt', { timeoutMs: 10_000 });
    expect(result.exitCode).toBe(0);
    expect(readFileSync(join(workspace, 'from-host.txt'), 'utf8')).toBe('host\nsandbox\n');
  });

  it('has its own /tmp', async () => {
    const hostFile = join(tmpdir(), `manus-host-only-${randomBytes(4).toString('hex')}`);
    writeFileSync(hostFile, 'host');
    const insideName = `manus-inside-only-${randomBytes(4).toString('hex')}`;
    try {
      const result = await sandbox.run(['sh', '-c', 'test -e "$1" && echo host-file-visible; echo inside > /tmp/"$2" && echo wrote', 'sh', hostFile, insideName], {
        timeoutMs: 10_000,
      });
      expect(result.stdout.toString()).toBe('wrote\n');
      expect(existsSync(join('/tmp', insideName))).toBe(false);
    } finally {
      rmSync(hostFile, { force: true });
    }
  });

  it.skipIf(!runningAsRoot)('runs commands as an unprivileged user when the runtime is root', async () => {
    const result = await sandbox.run('id -u; id -g; grep CapEff /proc/self/status; cat /etc/shadow 2>&1 >/dev/null | head -c 0; echo done', { timeoutMs: 10_000 });
    expect(result.stdout.toString()).toBe('65534\n65534\nCapEff:\t0000000000000000\ndone\n');
  });

  it.skipIf(!runningAsRoot)('reaches a workspace below a folder the sandbox user cannot enter', async () => {
    // /var/tmp is not covered by the sandbox's own /tmp, so the locked folder is seen as it is.
    const locked = mkdtempSync(join('/var/tmp', 'manus-locked-'));
    try {
      expect(statSync(locked).mode & 0o777).toBe(0o700);
      const lockedWorkspace = join(locked, 'workspace');
      mkdirSync(lockedWorkspace);
      const inner = await BwrapSandbox.create({ workspace: lockedWorkspace, network: false, options: readSandboxOptions({}) });
      try {
        const result = await inner.run('cd "$PWD" && pwd && echo ok > written.txt', { timeoutMs: 10_000 });
        expect(result.stderr.toString()).toBe('');
        expect(result.stdout.toString()).toBe(`${lockedWorkspace}\n`);
        expect(readFileSync(join(lockedWorkspace, 'written.txt'), 'utf8')).toBe('ok\n');
      } finally {
        await inner.dispose();
      }
    } finally {
      rmSync(locked, { recursive: true, force: true });
    }
  });

  it('on timeout kills every process of the command, background ones included', async () => {
    const sleeper = uniqueSleepArgument();
    const result = await sandbox.run(['sh', '-c', 'sleep "$1" & echo started; sleep "$1"', 'sh', sleeper], { timeoutMs: 1000 });
    expect(result).toMatchObject({ timedOut: true, signal: 'SIGKILL' });
    expect(result.stdout.toString()).toBe('started\n');
    await expect.poll(() => processesWithArgument(sleeper), { timeout: 3000 }).toEqual([]);
  });

  it('reports a command killed by a signal like a host process', async () => {
    const result = await sandbox.run('kill -TERM $$', { timeoutMs: 10_000 });
    expect(result).toMatchObject({ exitCode: null, signal: 'SIGTERM' });
  });

  it('is what the auto sandbox chooses here, without asking anyone', async () => {
    const choice = await chooseAutoSandbox({ kind: 'auto', network: false, options: {} }, { trustGrants: new Set() });
    expect(choice).toEqual({ settings: { kind: 'bwrap', network: false, options: {} }, reason: 'bubblewrap works here' });
  });
});

describe.skipIf(!availability.usable)('tools in the bwrap sandbox', () => {
  type TestContext = ReturnType<typeof createTestToolContext>;
  let created: TestContext;

  function useBwrap(options: Record<string, unknown> = {}, settings: Record<string, unknown> = {}): TestContext {
    created = createTestToolContext({ sandboxSettings: async () => ({ kind: 'bwrap', network: false, options }), settings });
    return created;
  }

  afterEach(async () => {
    await created?.dispose();
    if (created) rmSync(created.root, { recursive: true, force: true });
  });

  it('keeps a bash session inside the sandbox', async () => {
    const { context } = useBwrap();
    await bash.execute({ command: 'mkdir -p work && cd work && export STAGE=two' }, context);
    const result = (await bash.execute({ command: `echo "$PWD $STAGE"; ${listInterfaces}` }, context)) as ToolResult;
    expect(result.content).toBe(`${join(context.workspace, 'work')} two\nlo\n[Exit status 0]`);
  });

  it('runs python in fresh and persistent mode and reports its files', async () => {
    const { context } = useBwrap({}, { mode: 'persistent' });
    await pythonExecute.execute({ code: 'rows = [1, 2, 3]' }, context);
    const result = (await pythonExecute.execute({ code: 'open("rows.txt", "w").write(str(sum(rows)))' }, context)) as ToolResult;
    expect(result.isError).toBe(false);
    expect(result.files).toEqual(['rows.txt']);
    expect(readFileSync(join(context.workspace, 'rows.txt'), 'utf8')).toBe('6');
  });

  it('stops an infinite loop with the timeout and reports an error', async () => {
    const { context } = useBwrap();
    const result = (await pythonExecute.execute({ code: 'while True:\n    pass', timeout: 1 }, context)) as ToolResult;
    expect(result.isError).toBe(true);
    expect(result.content).toContain('[Timed out after 1 s');
  });

  it('stops a memory bomb at memory_mb and reports an error', async () => {
    const { context } = useBwrap({ memory_mb: 256 });
    const started = Date.now();
    const result = (await pythonExecute.execute({ code: 'hoard = []\nwhile True:\n    hoard.append(b"x" * (64 * 1024 * 1024))', timeout: 30 }, context)) as ToolResult;
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(result.isError).toBe(true);
    expect(result.content).toContain('MemoryError');
  });

  it('stops a fork bomb at the pids limit; the runtime and the next command are fine', async () => {
    const { context } = useBwrap({ pids: 64 });
    const before = countProcesses();
    const bomb = (await bash.execute({ command: 'bomb() { bomb | bomb; }; bomb', timeout: 5 }, context)) as ToolResult;
    expect(bomb.isError).toBe(true);
    expect(bomb.content).toContain('Resource temporarily unavailable');
    expect(bomb.content).toContain('[Timed out after 5 s');
    await expect.poll(countProcesses, { timeout: 5000 }).toBeLessThanOrEqual(before + 5);
    const after = (await bash.execute({ command: '/bin/echo recovered' }, context)) as ToolResult;
    expect(after.content).toBe('recovered\n[Exit status 0]');
  });

  it('contains a fork bomb sent to the background until the shell is restarted', async () => {
    const { context } = useBwrap({ pids: 64 });
    const before = countProcesses();
    const bomb = (await bash.execute({ command: ':(){ :|:& };:', timeout: 5 }, context)) as ToolResult;
    expect(bomb.content).toContain('[Exit status 0]');
    // However hard it tries, the bomb stays within the pids limit.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(countProcesses()).toBeLessThanOrEqual(before + 64 + 5);
    const restarted = (await bash.execute({ command: '/bin/echo fresh', restart: true }, context)) as ToolResult;
    expect(restarted.content).toBe('fresh\n[Exit status 0]');
    await expect.poll(countProcesses, { timeout: 5000 }).toBeLessThanOrEqual(before + 5);
  });

  it('stops a python fork bomb with an error result', async () => {
    const { context } = useBwrap({ pids: 64 });
    const result = (await pythonExecute.execute({ code: 'import os\nwhile True:\n    os.fork()', timeout: 10 }, context)) as ToolResult;
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/BlockingIOError|Resource temporarily unavailable|Timed out/);
  });
});

if (!availability.usable) {
  describe('bwrap sandbox (unavailable)', () => {
    it.skip(skipReason, () => {});
  });
}

const cgroups = await probeCgroups();
const wholeCommandSkipReason = !availability.usable
  ? skipReason
  : !runningAsRoot
    ? 'an unprivileged runtime cannot make cgroups: bwrap limits each process only'
    : cgroups.usable ? '' : `no cgroup for the whole command: ${cgroups.reason}`;
if (wholeCommandSkipReason) console.warn(`bwrap whole-command memory test skipped: ${wholeCommandSkipReason}`);

describe.skipIf(wholeCommandSkipReason !== '')('bwrap commands of a root runtime', () => {
  it('are held to memory_mb as a whole: four processes of 600 MB under 1024 cannot all hold theirs', async () => {
    const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'manus-bwrap-cgroup-')));
    const sandbox = await BwrapSandbox.create({ workspace, network: false, options: readSandboxOptions({ memory_mb: 1024 }) });
    try {
      const result = await sandbox.run(memoryHogsCommand(600), { timeoutMs: 60_000 });
      expect(processesThatHeld(result.stdout.toString()), result.stdout.toString() + result.stderr.toString()).toBeLessThan(2);
      if (cgroups.usable) {
        for (const parent of cgroups.place.parents) expect(readdirSync(parent).filter((name) => name.startsWith(`manus-${process.pid}-`))).toEqual([]);
      }
    } finally {
      await sandbox.dispose();
      rmSync(workspace, { recursive: true, force: true });
    }
  });
});
