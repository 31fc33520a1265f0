import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Dockerode from 'dockerode';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import bash from '../plugins/code/bash.js';
import pythonExecute from '../plugins/code/python_execute.js';
import { connectDocker, probeDocker } from '../runtime/services/sandbox/docker-connection.js';
import { cleanupLeftoverContainers, containerLabels } from '../runtime/services/sandbox/docker-ownership.js';
import { DockerSandbox } from '../runtime/services/sandbox/docker-sandbox.js';
import { sandboxDefaults } from '../runtime/config/defaults.js';
import { readSandboxOptions } from '../runtime/services/sandbox/sandbox-options.js';
import type { ToolResult } from '../runtime/contract/tool.js';
import { createTestToolContext } from './support/tool-context.js';
import { processesWithArgument } from './support/processes.js';

const availability = await probeDocker(sandboxDefaults.image);
const skipReason = availability.available ? '' : `docker sandbox tests skipped: ${availability.reason}`;
if (skipReason) console.warn(skipReason);

function uniqueSleepArgument(): string {
  return `3000.${randomBytes(3).readUIntBE(0, 3)}`;
}

async function containerExists(docker: Dockerode, id: string): Promise<boolean> {
  try {
    await docker.getContainer(id).inspect();
    return true;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return false;
    throw error;
  }
}

describe.skipIf(!availability.available)('docker sandbox', () => {
  let docker: Dockerode;
  let root: string;
  let workspace: string;
  let sandbox: DockerSandbox;
  let server: Server;
  let port: number;

  beforeAll(async () => {
    docker = await connectDocker();
    server = createServer((socket) => socket.end('hello from the host\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  beforeEach(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-docker-sandbox-')));
    workspace = join(root, 'workspace');
    mkdirSync(workspace);
    sandbox = await DockerSandbox.create({ workspace, runId: 'docker-test', network: false, options: readSandboxOptions({}), docker });
  });

  afterEach(async () => {
    await sandbox.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  it('runs as a non-root user with no capabilities and no new privileges', async () => {
    const result = await sandbox.run('id -u; grep -E "^(CapEff|NoNewPrivs)" /proc/self/status', { timeoutMs: 10_000 });
    const [uid, capabilities, noNewPrivileges] = result.stdout.toString().trim().split('\n');
    expect(Number(uid)).not.toBe(0);
    expect(capabilities).toBe('CapEff:\t0000000000000000');
    expect(noNewPrivileges).toBe('NoNewPrivs:\t1');
  });

  it('has no network besides its own loopback', async () => {
    const script = `import socket\ntry:\n    socket.create_connection(("127.0.0.1", ${port}), timeout=3)\n    print("connected")\nexcept OSError as error:\n    print("refused:", error)`;
    const result = await sandbox.run(['python3', '-c', script], { timeoutMs: 15_000 });
    expect(result.stdout.toString()).toMatch(/^refused:/);
    const interfaces = await sandbox.run("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '", { timeoutMs: 10_000 });
    expect(interfaces.stdout.toString()).toBe('lo\n');
  });

  it('has a read-only root file system and its own /tmp', async () => {
    const insideName = `manus-inside-only-${randomBytes(4).toString('hex')}`;
    const result = await sandbox.run(
      ['sh', '-c', 'touch /etc/probe 2>/dev/null && echo etc-written; touch /root/probe 2>/dev/null && echo root-written; echo x > /tmp/"$1" && echo tmp-written', 'sh', insideName],
      { timeoutMs: 10_000 },
    );
    expect(result.stdout.toString()).toBe('tmp-written\n');
    expect(existsSync(join('/tmp', insideName))).toBe(false);
  });

  it('mounts the workspace writable at /workspace, including files the host adds later', async () => {
    const first = await sandbox.run('pwd; mkdir -p out && echo made > out/file.txt', { timeoutMs: 10_000 });
    expect(first.stdout.toString()).toBe('/workspace\n');
    expect(readFileSync(join(workspace, 'out', 'file.txt'), 'utf8')).toBe('made\n');
    writeFileSync(join(workspace, 'from-host.txt'), 'host\n');
    const second = await sandbox.run('echo container >> from-host.txt', { cwd: '.', timeoutMs: 10_000 });
    expect(second.exitCode).toBe(0);
    expect(readFileSync(join(workspace, 'from-host.txt'), 'utf8')).toBe('host\ncontainer\n');
    const nested = await sandbox.run('pwd', { cwd: 'out', timeoutMs: 10_000 });
    expect(nested.stdout.toString()).toBe('/workspace/out\n');
  });

  it('feeds standard input and reports exit statuses and signals', async () => {
    const sorted = await sandbox.run(['sort'], { stdin: 'pear\napple\n', timeoutMs: 10_000 });
    expect(sorted.stdout.toString()).toBe('apple\npear\n');
    expect((await sandbox.run('exit 3', { timeoutMs: 10_000 })).exitCode).toBe(3);
    expect(await sandbox.run('kill -TERM $$', { timeoutMs: 10_000 })).toMatchObject({ exitCode: null, signal: 'SIGTERM' });
  });

  it('on timeout kills every process of the command, background ones included', async () => {
    const sleeper = uniqueSleepArgument();
    const result = await sandbox.run(['sh', '-c', 'sleep "$1" & echo started; sleep "$1"', 'sh', sleeper], { timeoutMs: 1000 });
    expect(result).toMatchObject({ timedOut: true, signal: 'SIGKILL' });
    expect(result.stdout.toString()).toBe('started\n');
    await expect.poll(() => processesWithArgument(sleeper), { timeout: 5000 }).toEqual([]);
  });

  it('kills what a command left running once it exits', async () => {
    const sleeper = uniqueSleepArgument();
    const result = await sandbox.run(['sh', '-c', 'sleep "$1" & echo started', 'sh', sleeper], { timeoutMs: 10_000 });
    expect(result.exitCode).toBe(0);
    await expect.poll(() => processesWithArgument(sleeper), { timeout: 5000 }).toEqual([]);
  });

  it('removes its container on dispose', async () => {
    const id = sandbox.containerId;
    const inspected = await docker.getContainer(id).inspect();
    expect(inspected.Config.Labels['manus.managed']).toBe('true');
    expect(inspected.Config.Labels['manus.run-id']).toBe('docker-test');
    expect(inspected.HostConfig.NetworkMode).toBe('none');
    await sandbox.dispose();
    expect(await containerExists(docker, id)).toBe(false);
  });
});

describe.skipIf(!availability.available)('tools in the docker sandbox', () => {
  type TestContext = ReturnType<typeof createTestToolContext>;
  let created: TestContext | undefined;

  function useDocker(options: Record<string, unknown> = {}, settings: Record<string, unknown> = {}): TestContext {
    created = createTestToolContext({ sandboxSettings: async () => ({ kind: 'docker', network: false, options }), settings });
    return created;
  }

  afterEach(async () => {
    await created?.dispose();
    if (created) rmSync(created.root, { recursive: true, force: true });
    created = undefined;
  });

  it('keeps a bash session, restarts it, and kills it with its background job on timeout', async () => {
    const { context } = useDocker();
    await bash.execute({ command: 'mkdir -p work && cd work && export STAGE=two' }, context);
    const kept = (await bash.execute({ command: 'echo "$PWD $STAGE"' }, context)) as ToolResult;
    expect(kept.content).toBe('/workspace/work two\n[Exit status 0]');
    const restarted = (await bash.execute({ command: 'echo "$PWD [$STAGE]"', restart: true }, context)) as ToolResult;
    expect(restarted.content).toBe('/workspace []\n[Exit status 0]');
    const sleeper = uniqueSleepArgument();
    const stuck = (await bash.execute({ command: `sleep ${sleeper} & echo started; sleep ${sleeper}`, timeout: 1 }, context)) as ToolResult;
    expect(stuck.isError).toBe(true);
    expect(stuck.content).toContain('started');
    expect(stuck.content).toContain('[Timed out after 1 s');
    await expect.poll(() => processesWithArgument(sleeper), { timeout: 5000 }).toEqual([]);
    const next = (await bash.execute({ command: 'echo alive' }, context)) as ToolResult;
    expect(next.content).toBe('alive\n[Exit status 0]');
  });

  it('runs python fresh and persistent and reports the files it wrote', async () => {
    const fresh = useDocker();
    const result = (await pythonExecute.execute({ code: 'import os\nprint(os.getcwd())\nopen("made.txt", "w").write("x")' }, fresh.context)) as ToolResult;
    expect(result.content).toContain('/workspace\n');
    expect(result.files).toEqual(['made.txt']);
    await fresh.dispose();
    rmSync(fresh.root, { recursive: true, force: true });

    const persistent = useDocker({}, { mode: 'persistent' });
    await pythonExecute.execute({ code: 'total = 40' }, persistent.context);
    const second = (await pythonExecute.execute({ code: 'total + 2' }, persistent.context)) as ToolResult;
    expect(second.content).toBe('42\n[Exit status 0]');
  });

  it('stops an infinite loop with the timeout and reports an error', async () => {
    const { context } = useDocker();
    const result = (await pythonExecute.execute({ code: 'while True:\n    pass', timeout: 1 }, context)) as ToolResult;
    expect(result.isError).toBe(true);
    expect(result.content).toContain('[Timed out after 1 s');
  });

  it('stops a memory bomb at memory_mb and reports an error', async () => {
    const { context } = useDocker({ memory_mb: 128 });
    const result = (await pythonExecute.execute({ code: 'hoard = []\nwhile True:\n    hoard.append(b"x" * (32 * 1024 * 1024))', timeout: 30 }, context)) as ToolResult;
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/Killed by SIGKILL \(the sandbox memory limit may have been reached\)|MemoryError/);
  });

  it('stops a fork bomb at the pids limit; the next command works', async () => {
    const { context } = useDocker({ pids: 64 });
    const bomb = (await bash.execute({ command: 'bomb() { bomb | bomb; }; bomb', timeout: 5 }, context)) as ToolResult;
    expect(bomb.isError).toBe(true);
    expect(bomb.content).toContain('[Timed out after 5 s');
    const after = (await bash.execute({ command: '/bin/echo recovered' }, context)) as ToolResult;
    expect(after.content).toBe('recovered\n[Exit status 0]');
  });
});

describe.skipIf(!availability.available)('leftover containers', () => {
  it('removes containers whose runtime has died and keeps those of live runtimes', async () => {
    const docker = await connectDocker();
    const finished = spawnSync('true');
    const deadPid = finished.pid as number;
    const create = (labels: Record<string, string>) =>
      docker.createContainer({ Image: sandboxDefaults.image, Cmd: ['sleep', 'infinity'], Labels: labels, HostConfig: { NetworkMode: 'none' } });
    const orphan = await create({ ...containerLabels('orphaned-run'), 'manus.owner-pid': String(deadPid) });
    const live = await create(containerLabels('live-run'));
    const foreign = await create({ ...containerLabels('other-machine'), 'manus.owner-host': 'another-machine', 'manus.owner-pid': String(deadPid) });
    try {
      const removed = await cleanupLeftoverContainers(docker);
      expect(removed.length).toBeGreaterThanOrEqual(1);
      expect(await containerExists(docker, orphan.id)).toBe(false);
      expect(await containerExists(docker, live.id)).toBe(true);
      expect(await containerExists(docker, foreign.id)).toBe(true);
    } finally {
      for (const container of [orphan, live, foreign]) await container.remove({ force: true }).catch(() => undefined);
    }
  });
});

if (!availability.available) {
  describe('docker sandbox (unavailable)', () => {
    it.skip(skipReason, () => {});
  });
}
