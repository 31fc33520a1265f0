import { existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import Dockerode from 'dockerode';
import { pack, type Headers } from 'tar-stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sandboxDefaults } from '../runtime/config/defaults.js';
import { connectDocker, probeDocker } from '../runtime/services/sandbox/docker-connection.js';
import { readDockerDaemonAddress } from '../runtime/services/sandbox/docker-daemon-address.js';
import { DockerSandbox } from '../runtime/services/sandbox/docker-sandbox.js';
import { readSandboxOptions } from '../runtime/services/sandbox/sandbox-options.js';
import { compareListing } from '../runtime/services/sandbox/docker-workspace-listing.js';
import { copyBack } from '../runtime/services/sandbox/workspace-copy-back.js';
import { hostSignature, type SyncedState } from '../runtime/services/sandbox/workspace-sync-state.js';
import { startTlsDockerDaemon, type TlsDockerDaemon } from './support/tls-docker-daemon.js';
import { createTestToolContext } from './support/tool-context.js';
import bash from '../plugins/code/bash.js';
import type { ToolResult } from '../runtime/contract/tool.js';

/** A tar archive as a hostile container's daemon could send it, entries in order. */
function archiveOf(entries: Array<Headers & { content?: string }>): Readable {
  const archive = pack();
  for (const { content, ...header } of entries) archive.entry({ mode: 0o644, ...header }, content ?? '');
  archive.finalize();
  return archive as unknown as Readable;
}

describe('copying a sandbox workspace back', () => {
  let root: string;
  let workspace: string;
  let outside: string;
  let state: SyncedState;

  beforeEach(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-copy-back-')));
    workspace = join(root, 'workspace');
    outside = join(root, 'outside');
    mkdirSync(workspace);
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret'), 'host secret\n');
    state = new Map();
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const copy = (entries: Array<Headers & { content?: string }>, limits?: { maximumBytes: number; maximumEntries: number }) =>
    copyBack(archiveOf(entries), { workspace, topName: 'workspace', state, ...(limits ? { limits } : {}) });

  it('writes new and changed files with their modes, and removes what the sandbox removed', async () => {
    writeFileSync(join(workspace, 'old.txt'), 'old\n');
    state.set('old.txt', { kind: 'file', sandbox: 'file:4:0:420', host: hostSignature(lstatSync(join(workspace, 'old.txt'), { bigint: true })) });
    const report = await copy([
      { name: 'workspace/', type: 'directory', mode: 0o755 },
      { name: 'workspace/tools/', type: 'directory', mode: 0o755 },
      { name: 'workspace/tools/run.sh', type: 'file', mode: 0o755, content: 'echo made\n' },
    ]);
    expect(report.refused).toEqual([]);
    expect(readFileSync(join(workspace, 'tools/run.sh'), 'utf8')).toBe('echo made\n');
    expect(statSync(join(workspace, 'tools/run.sh')).mode & 0o777).toBe(0o755);
    expect(existsSync(join(workspace, 'old.txt'))).toBe(false);
  });

  it('refuses names that are absolute or climb out with ".."', async () => {
    const report = await copy([
      { name: 'workspace/../outside/secret', type: 'file', content: 'overwritten\n' },
      { name: '/tmp/escaped', type: 'file', content: 'x' },
      { name: 'workspace/a/../../outside/new', type: 'file', content: 'x' },
    ]);
    expect(report.refused.map((refusal) => refusal.reason)).toEqual([
      'a name that climbs out with ".."',
      'an absolute name',
      'a name that climbs out with ".."',
    ]);
    expect(readFileSync(join(outside, 'secret'), 'utf8')).toBe('host secret\n');
    expect(existsSync(join(outside, 'new'))).toBe(false);
    expect(existsSync('/tmp/escaped')).toBe(false);
  });

  it('refuses a link and never writes through one, in the archive or already on the host', async () => {
    symlinkSync(outside, join(workspace, 'hostlink'));
    state.set('hostlink', { kind: 'link', sandbox: `link:${outside}`, host: `link:${outside}` });
    const report = await copy([
      { name: 'workspace/escape', type: 'symlink', linkname: outside },
      { name: 'workspace/escape/secret', type: 'file', content: 'through the archive link\n' },
      { name: 'workspace/hostlink/secret', type: 'file', content: 'through the host link\n' },
    ]);
    expect(report.refused).toEqual([
      { path: 'escape', reason: `a symbolic link (to ${outside}) is not copied back`, protected: false },
      { path: 'hostlink/secret', reason: 'it lies past a symbolic link on the host, which is not followed', protected: false },
    ]);
    expect(readFileSync(join(outside, 'secret'), 'utf8')).toBe('host secret\n');
    expect(lstatSync(join(workspace, 'escape')).isDirectory()).toBe(true);
    // The archive's link was refused, so its files landed in a real folder inside the workspace.
    expect(readFileSync(join(workspace, 'escape/secret'), 'utf8')).toBe('through the archive link\n');
  });

  it('refuses hard links, devices and FIFOs, and replaces a hard-linked host file without writing the file it shares', async () => {
    linkSync(join(outside, 'secret'), join(workspace, 'shared'));
    const report = await copy([
      { name: 'workspace/hard', type: 'link', linkname: '/etc/passwd' },
      { name: 'workspace/device', type: 'character-device', devmajor: 1, devminor: 3 },
      { name: 'workspace/pipe', type: 'fifo' },
      { name: 'workspace/shared', type: 'file', content: 'replaced\n' },
    ]);
    expect(report.refused.map((refusal) => `${refusal.path}: ${refusal.reason}`)).toEqual([
      'hard: a hard link (to /etc/passwd) is not copied back',
      'device: a device is not copied back',
      'pipe: a FIFO is not copied back',
    ]);
    // The host changed nothing of its own there since the last copy: "shared" was unknown, so the host's stays.
    expect(readFileSync(join(outside, 'secret'), 'utf8')).toBe('host secret\n');
    state.set('shared', {
      kind: 'file',
      sandbox: 'file:0:0:0',
      host: hostSignature(lstatSync(join(workspace, 'shared'), { bigint: true })),
    });
    await copy([{ name: 'workspace/shared', type: 'file', content: 'replaced\n' }]);
    expect(readFileSync(join(workspace, 'shared'), 'utf8')).toBe('replaced\n');
    expect(readFileSync(join(outside, 'secret'), 'utf8')).toBe('host secret\n');
  });

  it('refuses protected paths and says they are an attempt', async () => {
    const report = await copy([
      { name: 'workspace/agents.yaml', type: 'file', content: 'version: 1\n' },
      { name: 'workspace/.git/hooks/pre-commit', type: 'file', mode: 0o755, content: 'curl evil\n' },
      { name: 'workspace/src/.bashrc', type: 'file', content: 'evil\n' },
    ]);
    expect(report.refused.every((refusal) => refusal.protected)).toBe(true);
    expect(report.refused.map((refusal) => refusal.path)).toEqual(['agents.yaml', '.git/hooks/pre-commit', 'src/.bashrc']);
    expect(existsSync(join(workspace, 'agents.yaml'))).toBe(false);
    expect(existsSync(join(workspace, '.git'))).toBe(false);
    expect(existsSync(join(workspace, 'src/.bashrc'))).toBe(false);
  });

  it('stops at the size limit, before reading an entry that claims more, and then removes nothing', async () => {
    writeFileSync(join(workspace, 'kept.txt'), 'kept\n');
    state.set('kept.txt', {
      kind: 'file',
      sandbox: 'file:5:0:420',
      host: hostSignature(lstatSync(join(workspace, 'kept.txt'), { bigint: true })),
    });
    const big = 'x'.repeat(4096);
    const report = await copy(
      [
        { name: 'workspace/one', type: 'file', content: big },
        { name: 'workspace/two', type: 'file', content: big },
      ],
      { maximumBytes: 6000, maximumEntries: 100 },
    );
    expect(report.complete).toBe(false);
    expect(report.refused.at(-1)?.reason).toMatch(/more than 6000 bytes/);
    expect(existsSync(join(workspace, 'two'))).toBe(false);
    expect(existsSync(join(workspace, 'kept.txt'))).toBe(true);
    const many = await copy(
      Array.from({ length: 20 }, (_, index) => ({ name: `workspace/f${index}`, type: 'file' as const, content: '' })),
      { maximumBytes: 1e9, maximumEntries: 10 },
    );
    expect(many.complete).toBe(false);
    expect(many.refused.at(-1)?.reason).toMatch(/more than 10 entries/);
  });
});

describe('the listing of a container workspace', () => {
  const listing = (...records: Array<[string, string, string?]>) => Buffer.from(records.map(([head, path, target]) => `${head}\0${path}\0${target ?? ''}\0`).join(''));

  it('names what changed, what is gone and which files have several names', () => {
    const state: SyncedState = new Map([
      ['kept.txt', { kind: 'file', sandbox: 'file:5:1700000000:420', host: 'h' }],
      ['gone.txt', { kind: 'file', sandbox: 'file:1:1700000000:420', host: 'h' }],
      ['src', { kind: 'folder', sandbox: 'folder', host: 'folder' }],
    ]);
    const changes = compareListing(
      listing(
        ['f 5 1700000000.25 644 1', 'kept.txt'],
        ['d 4096 1700000001.0 755 2', 'src'],
        ['d 4096 1700000001.0 755 2', 'new'],
        ['f 3 1700000001.0 644 1', 'new/inside.txt'],
        ['f 3 1700000001.0 644 2', 'src/linked'],
        ['l 11 1700000001.0 777 1', 'src/link', '/etc/passwd'],
      ),
      state,
    );
    expect(changes).toMatchObject({ changed: ['new', 'src/link'], gone: ['gone.txt'], hardLinked: ['src/linked'] });
  });

  it('is not trusted to name paths outside the workspace: such a listing is not used', () => {
    for (const path of ['../../etc/passwd', '/etc/passwd', 'a/../../b', './x', 'a//b']) {
      expect(compareListing(listing(['f 1 1700000000.0 644 1', path]), new Map())).toBeUndefined();
    }
    expect(compareListing(Buffer.from('f 1 1700000000.0 644 1\0unterminated'), new Map())).toBeUndefined();
  });
});

describe('reading the daemon address', () => {
  it('copies the workspace for any address but a local socket, and refuses plain TCP beyond loopback', () => {
    expect(readDockerDaemonAddress({ DOCKER_HOST: 'unix:///run/docker.sock' }).workspace).toBe('mount');
    expect(readDockerDaemonAddress({ DOCKER_HOST: 'ssh://builder@build.example:2222' })).toMatchObject({
      workspace: 'copy',
      options: { protocol: 'ssh', host: 'build.example', port: '2222', username: 'builder' },
    });
    expect(readDockerDaemonAddress({ DOCKER_HOST: 'tcp://127.0.0.1:2375' }).workspace).toBe('copy');
    expect(readDockerDaemonAddress({ DOCKER_HOST: 'tcp://127.0.0.1:2375', MANUS_DOCKER_WORKSPACE: 'mount' }).workspace).toBe('mount');
    expect(readDockerDaemonAddress({ DOCKER_HOST: 'unix:///forwarded.sock', MANUS_DOCKER_WORKSPACE: 'copy' }).workspace).toBe('copy');
    expect(() => readDockerDaemonAddress({ DOCKER_HOST: 'tcp://10.1.2.3:2375' })).toThrow(/without TLS; set DOCKER_TLS_VERIFY=1/);
    expect(() => readDockerDaemonAddress({ DOCKER_HOST: 'tcp://10.1.2.3:2376', DOCKER_CERT_PATH: '/nonexistent' })).toThrow(/ca\.pem cannot be read/);
  });
});

const image = sandboxDefaults.image;
const local = await probeDocker(image);
const daemonOrReason: TlsDockerDaemon | { reason: string } = local.available
  ? await startTlsDockerDaemon(image)
  : { reason: `no local daemon to load the image from (${local.reason})` };
const remote = 'host' in daemonOrReason ? daemonOrReason : undefined;
if (!remote) console.warn(`remote docker sandbox tests skipped: ${(daemonOrReason as { reason: string }).reason}`);
else console.info(`loading ${image} into the second daemon took ${remote.imageLoadMs} ms`);

describe.skipIf(!remote)('docker sandbox on a daemon reached over TCP with TLS', () => {
  let docker: Dockerode;
  let root: string;
  let workspace: string;
  let sandbox: DockerSandbox;

  beforeAll(async () => {
    docker = await connectDocker(remote!.environment);
  });

  afterAll(async () => {
    await remote?.stop();
  }, 300_000);

  beforeEach(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-remote-docker-')));
    workspace = join(root, 'workspace');
    mkdirSync(join(workspace, 'src'), { recursive: true });
    writeFileSync(join(workspace, 'src', 'data.txt'), 'from the host\n');
    writeFileSync(join(workspace, 'agents.yaml'), 'version: 1\n');
    sandbox = await DockerSandbox.create({ workspace, runId: 'remote-test', network: false, options: readSandboxOptions({}), docker, workspaceMode: 'copy' });
  }, 60_000);

  afterEach(async () => {
    await sandbox.dispose().catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  });

  it('refuses a client without the certificate', async () => {
    const withoutCertificate = new Dockerode({ protocol: 'https', host: '127.0.0.1', port: new URL(remote!.host.replace('tcp:', 'http:')).port, ca: readFileSync(join(remote!.clientCertificates, 'ca.pem')), cert: undefined, key: undefined, timeout: 5000 });
    await expect(withoutCertificate.ping()).rejects.toThrow();
    const plain = await connectDocker({ DOCKER_HOST: remote!.host }, 5000);
    await expect(plain.ping()).rejects.toThrow();
    expect(await docker.ping()).toBeTruthy();
  });

  it('keeps the local sandbox rules: no network, a non-root user, no capabilities, limits, no workspace mount', async () => {
    const information = await docker.getContainer(sandbox.containerId).inspect();
    expect(information.HostConfig.NetworkMode).toBe('none');
    expect(information.HostConfig.CapDrop).toEqual(['ALL']);
    expect(information.HostConfig.SecurityOpt).toEqual(['no-new-privileges']);
    expect(information.HostConfig.ReadonlyRootfs).toBe(true);
    expect(information.HostConfig.Memory).toBe(sandboxDefaults.memory_mb * 1024 * 1024);
    expect(information.HostConfig.PidsLimit).toBe(sandboxDefaults.pids);
    expect(information.HostConfig.Binds ?? []).toEqual([]);
    const result = await sandbox.run('id -u; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "', { timeoutMs: 20_000 });
    const [uid, interfaces] = result.stdout.toString().trim().split('\n');
    expect(Number(uid)).not.toBe(0);
    expect(interfaces).toBe('lo');
  });

  it('runs a command that sees the workspace, and its changes come back before the next tool reads them', async () => {
    const first = await sandbox.run('cat src/data.txt && echo made > src/new.txt && printf "#!/bin/sh\\necho ran\\n" > run.sh && chmod +x run.sh && echo more >> src/data.txt', {
      timeoutMs: 20_000,
    });
    expect(first.stdout.toString()).toBe('from the host\n');
    expect(first.exitCode).toBe(0);
    expect(readFileSync(join(workspace, 'src/new.txt'), 'utf8')).toBe('made\n');
    expect(readFileSync(join(workspace, 'src/data.txt'), 'utf8')).toBe('from the host\nmore\n');
    expect(statSync(join(workspace, 'run.sh')).mode & 0o111).not.toBe(0);
    // A file tool writes on the host between commands; the next command sees it.
    writeFileSync(join(workspace, 'src/written-by-a-tool.txt'), 'tool\n');
    rmSync(join(workspace, 'src/new.txt'));
    const second = await sandbox.run('cat src/written-by-a-tool.txt; ls src; ./run.sh; rm src/data.txt', { timeoutMs: 20_000 });
    expect(second.stdout.toString()).toBe('tool\ndata.txt\nwritten-by-a-tool.txt\nran\n');
    expect(existsSync(join(workspace, 'src/data.txt'))).toBe(false);
  });

  it('brings back many changes at once as well as a few, and a command that changes nothing leaves the host alone', async () => {
    const many = await sandbox.run('mkdir -p out && for n in $(seq 1 40); do echo "$n" > "out/$n.txt"; done && rm src/data.txt', { timeoutMs: 20_000 });
    expect(many.exitCode).toBe(0);
    expect(readFileSync(join(workspace, 'out/40.txt'), 'utf8')).toBe('40\n');
    expect(existsSync(join(workspace, 'src/data.txt'))).toBe(false);
    const before = statSync(join(workspace, 'out/1.txt'), { bigint: true });
    await sandbox.run('cat out/1.txt > /dev/null', { timeoutMs: 20_000 });
    expect(statSync(join(workspace, 'out/1.txt'), { bigint: true }).mtimeNs).toBe(before.mtimeNs);
    await sandbox.run('echo changed > out/1.txt', { timeoutMs: 20_000 });
    expect(readFileSync(join(workspace, 'out/1.txt'), 'utf8')).toBe('changed\n');
  });

  it('keeps links, FIFOs and hard links on the container side, and says so in the output', async () => {
    const result = await sandbox.run('ln -s /etc/passwd src/passwd-link && mkfifo src/pipe && echo a > src/one && ln src/one src/two', { timeoutMs: 20_000 });
    const stderr = result.stderr.toString();
    expect(stderr).toContain('src/passwd-link: a symbolic link (to /etc/passwd) is not copied back');
    expect(stderr).toContain('src/pipe: a FIFO is not copied back');
    expect(stderr).toMatch(/src\/(one|two): a hard link/);
    expect(existsSync(join(workspace, 'src/passwd-link'))).toBe(false);
    expect(existsSync(join(workspace, 'src/pipe'))).toBe(false);
    // Reported once, not after every later command.
    const next = await sandbox.run('true', { timeoutMs: 20_000 });
    expect(next.stderr.toString()).toBe('');
  });

  it('makes protected paths unwritable in the container and stops the run when one is replaced anyway', async () => {
    const denied = await sandbox.run('echo changed > agents.yaml', { timeoutMs: 20_000 });
    expect(denied.exitCode).not.toBe(0);
    expect(readFileSync(join(workspace, 'agents.yaml'), 'utf8')).toBe('version: 1\n');
    // The folder holding it is the user's in a subfolder: a protected name made there is refused on the way back.
    await expect(sandbox.run('echo evil > src/.bashrc', { timeoutMs: 20_000 })).rejects.toThrow(/protected paths.*src\/\.bashrc/);
    expect(existsSync(join(workspace, 'src/.bashrc'))).toBe(false);
  });

  it('serves the bash tool from DOCKER_HOST and its TLS variables, its persistent shell in step with the file tools', async () => {
    const previous = { ...process.env };
    Object.assign(process.env, remote!.environment);
    delete process.env.MANUS_DOCKER_HOST;
    const created = createTestToolContext({ sandboxSettings: async () => ({ kind: 'docker', network: false, options: {} }) });
    try {
      const { context } = created;
      const made = (await bash.execute({ command: 'mkdir -p notes && cd notes && echo "from the shell" > made.txt && echo done' }, context)) as ToolResult;
      expect(made.content).toBe('done\n[Exit status 0]');
      expect((await context.files.readFile('notes/made.txt')).toString()).toBe('from the shell\n');
      await context.files.writeFile('notes/edited.txt', 'from a file tool\n');
      const seen = (await bash.execute({ command: 'cat edited.txt' }, context)) as ToolResult;
      expect(seen.content).toBe('from a file tool\n[Exit status 0]');
    } finally {
      await created.dispose();
      rmSync(created.root, { recursive: true, force: true });
      for (const name of Object.keys(remote!.environment)) {
        if (previous[name] === undefined) delete process.env[name];
        else process.env[name] = previous[name];
      }
      if (previous.MANUS_DOCKER_HOST !== undefined) process.env.MANUS_DOCKER_HOST = previous.MANUS_DOCKER_HOST;
    }
  });

  it('names the command that loads a missing image into the remote daemon', async () => {
    const previous = { ...process.env };
    Object.assign(process.env, remote!.environment);
    try {
      await expect(
        DockerSandbox.create({ workspace, runId: 'remote-missing', network: false, options: readSandboxOptions({ image: 'manus-sandbox:missing' }), docker }),
      ).rejects.toThrow(/docker save manus-sandbox:missing \| DOCKER_HOST=tcp:\/\/127\.0\.0\.1:\d+ docker load/);
    } finally {
      for (const name of Object.keys(remote!.environment)) {
        if (previous[name] === undefined) delete process.env[name];
        else process.env[name] = previous[name];
      }
    }
  });
});
