/**
 * Docker: one long-lived container per run (`sleep infinity` under docker's init, which reaps
 * orphans), commands and sessions through `docker exec`. The container has no network unless
 * allowed, a non-root user, no capabilities, no-new-privileges, memory, CPU and pids limits, a
 * read-only root with its own tmpfs on /tmp, and the workspace bind-mounted at /workspace, with
 * the protected paths inside it that exist when the container starts mounted read-only. A root
 * runtime gives ownership of what a command changed back to the workspace's owner. The container is removed on dispose; `cleanupLeftoverContainers` removes those of runtimes
 * that died before they could. A daemon on another machine cannot mount the workspace: it is
 * copied into a volume of the container and kept in step instead (docker-workspace-sync.ts).
 */
import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { posix, relative, sep } from 'node:path';
import { PassThrough, Writable, type Duplex } from 'node:stream';
import type Dockerode from 'dockerode';
import { BoundedOutput, defaultOutputLimitBytes } from '../../contract/bounded-output.js';
import { resolveCommandFolder, type CommandFolder } from './command-folder.js';
import { toArgv } from './command-line.js';
import { connectDocker, missingImageFix } from './docker-connection.js';
import { readDockerDaemonAddress, type DockerWorkspaceMode } from './docker-daemon-address.js';
import { refuseHostFolders, startWorkspaceCopy, type DockerWorkspaceSync } from './docker-workspace-sync.js';
import { execKillerScript, execTokenVariable, execWrapperScript } from './docker-exec-scripts.js';
import { containerLabels } from './docker-ownership.js';
import { decodeExitStatus } from './exit-status.js';
import { SandboxError } from './sandbox-errors.js';
import { sandboxEnvironment } from './sandbox-environment.js';
import { awaitBridgeScript, behindBridge, bridgeSockets, commandText, egressEnvironment, startBridgeScript, withRefusalLines, type SandboxEgress } from './egress-bridge.js';
import { fallbackSandboxUser, type SandboxOptions, type SandboxUser } from './sandbox-options.js';
import type {
  Sandbox,
  SandboxCommand,
  SandboxCommandOptions,
  SandboxCommandResult,
  SandboxSession,
  SandboxSessionOptions,
  SessionExit,
} from '../../contract/sandbox-types.js';
import type { ProtectedPathGuard } from '../../contract/protected-path-guard.js';
import { ProtectedMounts } from './protected-mounts.js';
import { readOnlyFolderView } from './bwrap-folders.js';
import {
  grantWorkspaceAccess,
  returnWorkspaceAccess,
  workspaceOwner,
  type OriginalOwner,
  type WorkspaceAccessOptions,
} from './workspace-access.js';

export interface DockerSandboxSettings {
  workspace: string;
  runId: string;
  network: boolean;
  options: Pick<SandboxOptions, 'image' | 'memoryMb' | 'cpus' | 'pids' | 'user' | 'passEnvironment'>;
  /** A client to reuse; by default one is connected as `connectDocker` describes. */
  docker?: Dockerode;
  protectedPaths?: ProtectedPathGuard;
  /** Host folders mounted read-only at their own paths (a session's `readOnlyFolders`). */
  readOnlyFolders?: string[];
  /** Of those, the ones opened to the container's user past their own permission bits (a session's `openedFolders`). */
  openedFolders?: string[];
  /** Bind-mount the workspace or copy it in and out; by default as the daemon's address says (docker-daemon-address.ts). */
  workspaceMode?: DockerWorkspaceMode;
  /** Set when commands may reach only named hosts: the container gets the proxy's sockets and a bridge to them. */
  egress?: SandboxEgress;
}

interface StartedExec {
  exec: Dockerode.Exec;
  stream: Duplex;
  token: string;
}

const containerWorkspace = '/workspace';
/** Where the egress proxy's sockets are bound in the container. */
const egressFolder = '/run/manus-egress';
const bytesPerMegabyte = 1024 * 1024;
/** How long the in-container killer may take before the container is restarted instead. */
const killDeadlineMs = 5000;
/** How long to wait for an exec's stream to end once its processes were killed. */
const streamEndGraceMs = 10_000;
const exitPollAttempts = 20;
const exitPollIntervalMs = 50;

export class DockerSandbox implements Sandbox {
  readonly kind = 'docker';
  readonly workspacePath = containerWorkspace;
  private disposed = false;
  private readonly access: WorkspaceAccessOptions;
  /** Containers of sessions that must see host folders this container does not mount. */
  private readonly companions = new Set<DockerSandbox>();
  /** Companions being removed: the sandbox is not done until they are gone. */
  private readonly companionDisposals = new Set<Promise<void>>();

  private constructor(
    private readonly docker: Dockerode,
    private readonly container: Dockerode.Container,
    private readonly hostWorkspace: string,
    /** Set when the container's user is not the runtime's user and must be given new files. */
    private readonly grantTo: SandboxUser | undefined,
    /** Who gets back what the container's user created. */
    private readonly owner: SandboxUser | undefined,
    private readonly settings: DockerSandboxSettings,
    protectedPaths: ProtectedPathGuard | undefined,
    /** Set when the daemon is on another machine and the workspace is copied in and out. */
    private readonly workspaceCopy?: DockerWorkspaceSync,
  ) {
    this.access = {
      skip: protectedPaths ? (path) => protectedPaths.protectionOf(path) !== undefined : undefined,
      keepMode: protectedPaths ? (path) => protectedPaths.entries.some((entry) => entry.path === path) : undefined,
      originalOwners: new Map<string, OriginalOwner>(),
    };
  }

  static async create(settings: DockerSandboxSettings): Promise<DockerSandbox> {
    const docker = settings.docker ?? (await connectDocker());
    const workspace = realpathSync(settings.workspace);
    // A daemon on another machine cannot mount this one's folders: the workspace is copied instead.
    const copying = (settings.workspaceMode ?? readDockerDaemonAddress().workspace) === 'copy';
    if (copying) refuseHostFolders(settings.readOnlyFolders ?? []);
    if (copying && settings.egress) {
      // The proxy's sockets are files of this machine: a container elsewhere cannot be bridged to them.
      throw new SandboxError('sandbox_unavailable', 'A Docker daemon on another machine cannot reach this run\'s egress proxy, so sandbox.network.allow cannot be held there; use a local daemon, or sandbox.network: false.');
    }
    const user = settings.options.user ?? (await workspaceOwnerOrFallback(workspace));
    const grantTo = copying || user.uid === process.getuid?.() ? undefined : user;
    const owner = grantTo ? await workspaceOwner(workspace) : undefined;
    const protectedMounts = new ProtectedMounts(workspace, settings.protectedPaths);
    const readOnly = await protectedMounts.existing();
    const pinned = await protectedMounts.pinned();
    const inContainer = (path: string) => posix.join(containerWorkspace, ...relative(workspace, path).split(sep));
    const { options } = settings;
    let container: Dockerode.Container;
    try {
      container = await docker.createContainer({
        name: containerName(settings.runId),
        Image: options.image,
        // With an allowlist, the image's socat bridges the container's loopback to the proxy's sockets.
        Cmd: settings.egress ? ['sh', '-c', `${startBridgeScript(egressFolder)}exec sleep infinity`] : ['sleep', 'infinity'],
        User: `${user.uid}:${user.gid}`,
        WorkingDir: containerWorkspace,
        Env: environmentPairs({ ...sandboxEnvironment('docker', options.passEnvironment), ...(settings.egress ? egressEnvironment() : {}) }),
        Labels: containerLabels(settings.runId),
        ...(copying ? { Volumes: { [containerWorkspace]: {} } } : {}),
        HostConfig: {
          Binds: copying ? [] : [
            `${workspace}:${containerWorkspace}:rw`,
            ...pinned.map((path) => `${path}:${inContainer(path)}:rw`),
            ...readOnly.map((path) => `${path}:${inContainer(path)}:ro`),
            ...(await readOnlyFolderBinds(settings.readOnlyFolders ?? [], settings.openedFolders ?? [], user)),
            ...(settings.egress ? egressBinds(settings.egress) : []),
          ],
          NetworkMode: settings.network ? 'bridge' : 'none',
          Memory: options.memoryMb * bytesPerMegabyte,
          MemorySwap: options.memoryMb * bytesPerMegabyte,
          NanoCpus: Math.round(options.cpus * 1e9),
          PidsLimit: options.pids,
          CapDrop: ['ALL'],
          SecurityOpt: ['no-new-privileges'],
          Init: true,
          ReadonlyRootfs: true,
          Tmpfs: { '/tmp': 'rw,nosuid,nodev,mode=1777' },
        },
      });
    } catch (error) {
      const hint = (error as { statusCode?: number }).statusCode === 404 ? ` (${missingImageFix(options.image, readDockerDaemonAddress())})` : '';
      throw new SandboxError('sandbox_unavailable', `Could not create a container from image ${options.image}${hint}: ${(error as Error).message}`);
    }
    try {
      await container.start();
    } catch (error) {
      await container.remove({ force: true }).catch(() => undefined);
      throw new SandboxError('sandbox_unavailable', `Could not start the sandbox container: ${(error as Error).message}`);
    }
    const workspaceCopy = copying ? await startWorkspaceCopy({ container, workspace, containerWorkspace, user, protectedPaths: settings.protectedPaths }) : undefined;
    return new DockerSandbox(docker, container, workspace, grantTo, owner, { ...settings, docker }, settings.protectedPaths, workspaceCopy);
  }

  /** The container's id, for diagnostics and tests. */
  get containerId(): string {
    return this.container.id;
  }

  async run(command: SandboxCommand, options: SandboxCommandOptions): Promise<SandboxCommandResult> {
    const result = await this.runCommand(command, options);
    // What the copy back refused is the command's doing: its output says so.
    const notice = this.workspaceCopy?.takeNotice();
    return notice ? { ...result, stderr: Buffer.concat([result.stderr, Buffer.from(notice)]) } : result;
  }

  private async runCommand(command: SandboxCommand, options: SandboxCommandOptions): Promise<SandboxCommandResult> {
    const argv = toArgv(command);
    const folder = await resolveCommandFolder(this.hostWorkspace, options.cwd);
    await this.refreshWorkspaceAccess();
    const started = performance.now();
    const limit = options.outputLimitBytes ?? defaultOutputLimitBytes;
    const stdout = new BoundedOutput(limit, options.outputSinks?.stdout);
    const stderr = new BoundedOutput(limit, options.outputSinks?.stderr);
    const hasInput = options.stdin !== undefined;
    const watch = this.settings.egress?.watchCommand(commandText(argv));
    const { exec, stream, token } = await this.startExec(argv, folder, options.env ?? {}, hasInput).catch((error: unknown) => {
      watch?.end();
      throw error;
    });
    this.docker.modem.demuxStream(stream, collectInto(stdout), collectInto(stderr));
    if (hasInput) stream.end(options.stdin);

    let timedOut = false;
    let aborted = false;
    let killing: Promise<void> | undefined;
    const stop = () => {
      killing ??= this.killExec(token).then(() => endWithin(stream, streamEndGraceMs).then(() => undefined));
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      stop();
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await endOf(stream);
      await killing;
      const result: SandboxCommandResult = {
        stdout: stdout.toBuffer(),
        stderr: stderr.toBuffer(),
        ...(await this.exitOf(exec)),
        timedOut,
        aborted,
        durationMs: Math.round(performance.now() - started),
        omittedBytes: { stdout: stdout.omittedBytes, stderr: stderr.omittedBytes },
      };
      return watch ? withRefusalLines(result, watch.refusals()) : result;
    } finally {
      watch?.end();
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      await this.afterCommand();
    }
  }

  async spawnSession(command: SandboxCommand, options: SandboxSessionOptions = {}): Promise<SandboxSession> {
    if (options.readOnlyFolders?.length) return this.spawnInCompanion(command, options);
    const argv = toArgv(command);
    const folder = await resolveCommandFolder(this.hostWorkspace, options.cwd);
    await this.refreshWorkspaceAccess();
    const { exec, stream, token } = await this.startExec(argv, folder, options.env ?? {}, true);
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    this.docker.modem.demuxStream(stream, stdout, stderr);
    let running = true;
    const exited = endOf(stream).then(async (): Promise<SessionExit> => {
      running = false;
      stdout.end();
      stderr.end();
      return this.exitOf(exec);
    });
    return {
      stdin: stream,
      stdout,
      stderr,
      exited,
      get running() {
        return running;
      },
      kill: async () => {
        if (running) await this.killExec(token);
        await endWithin(stream, streamEndGraceMs);
        await exited;
      },
    };
  }

  /**
   * A container's mounts are fixed when it is made, so a session that must see other host folders
   * gets a container of its own: the same image, user, limits, network and workspace, plus those
   * folders read-only. It is removed when the session ends, or with this sandbox.
   */
  private async spawnInCompanion(command: SandboxCommand, options: SandboxSessionOptions): Promise<SandboxSession> {
    const companion = await DockerSandbox.create({ ...this.settings, readOnlyFolders: options.readOnlyFolders, openedFolders: options.openedFolders });
    this.companions.add(companion);
    try {
      const session = await companion.spawnSession(command, { ...options, readOnlyFolders: undefined });
      void session.exited.then(() => this.releaseCompanion(companion));
      return session;
    } catch (error) {
      await this.releaseCompanion(companion);
      throw error;
    }
  }

  private async releaseCompanion(companion: DockerSandbox): Promise<void> {
    if (!this.companions.delete(companion)) return;
    const disposal = companion.dispose().catch(() => undefined);
    this.companionDisposals.add(disposal);
    await disposal;
    this.companionDisposals.delete(disposal);
  }

  async refreshWorkspaceAccess(): Promise<void> {
    if (this.workspaceCopy) await this.workspaceCopy.copyIn();
    if (this.grantTo) await grantWorkspaceAccess(this.hostWorkspace, this.grantTo, this.access);
  }

  async afterCommand(): Promise<void> {
    if (this.workspaceCopy && !this.disposed) await this.workspaceCopy.copyBack();
    if (this.grantTo && this.owner) await returnWorkspaceAccess(this.hostWorkspace, this.grantTo, this.owner, this.access);
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    // A companion whose session just ended may still be being removed: the sandbox ends after it.
    await Promise.all([...[...this.companions].map((companion) => this.releaseCompanion(companion)), ...this.companionDisposals]);
    try {
      // What background processes wrote since the last command comes back before the copy is gone.
      await this.workspaceCopy?.copyBack();
    } finally {
      try {
        await this.container.remove({ force: true, v: true });
      } catch (error) {
        if ((error as { statusCode?: number }).statusCode !== 404) throw error;
      }
    }
    await this.afterCommand();
  }

  private async startExec(argv: string[], folder: CommandFolder, env: Record<string, string>, attachStdin: boolean): Promise<StartedExec> {
    if (this.disposed) throw new SandboxError('sandbox_failed', 'The docker sandbox was used after it was disposed.');
    const token = randomBytes(16).toString('hex');
    try {
      const exec = await this.container.exec({
        Cmd: ['sh', '-c', execWrapperScript, 'manus-exec', ...(this.settings.egress ? behindBridge(awaitBridgeScript(), argv) : argv)],
        Env: [`${execTokenVariable}=${token}`, ...environmentPairs(env)],
        WorkingDir: posix.join(containerWorkspace, folder.relativePath),
        AttachStdin: attachStdin,
        AttachStdout: true,
        AttachStderr: true,
      });
      const stream = (await exec.start({ hijack: true, stdin: attachStdin })) as Duplex;
      // Writing to a session whose process has ended fails; the caller learns of it from `exited`.
      stream.on('error', () => {});
      return { exec, stream, token };
    } catch (error) {
      throw new SandboxError('sandbox_failed', `Could not start a command in the sandbox container: ${(error as Error).message}`);
    }
  }

  /** Kills every process of one exec; when that cannot work (a fork bomb holds every pid), restarts the container. */
  private async killExec(token: string): Promise<void> {
    const cleared = await this.runKiller(token).catch(() => false);
    if (!cleared && !this.disposed) await this.container.restart({ t: 0 }).catch(() => undefined);
  }

  private async runKiller(token: string): Promise<boolean> {
    const exec = await this.container.exec({
      Cmd: ['sh', '-c', execKillerScript, 'manus-kill', token],
      AttachStdout: true,
      AttachStderr: true,
    });
    const stream = (await exec.start({ hijack: true, stdin: false })) as Duplex;
    stream.on('error', () => {});
    stream.resume();
    if (!(await endWithin(stream, killDeadlineMs))) return false;
    const information = await exec.inspect();
    return information.ExitCode === 0;
  }

  private async exitOf(exec: Dockerode.Exec): Promise<SessionExit> {
    try {
      let information = await exec.inspect();
      // The stream can end a moment before the daemon records the exit.
      for (let attempt = 0; information.Running && attempt < exitPollAttempts; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, exitPollIntervalMs));
        information = await exec.inspect();
      }
      if (information.ExitCode === null || information.ExitCode === undefined) return { exitCode: null, signal: 'SIGKILL' };
      return decodeExitStatus(information.ExitCode);
    } catch {
      // The container is gone (disposed or restarted): whatever ran in it was killed.
      return { exitCode: null, signal: 'SIGKILL' };
    }
  }
}

async function workspaceOwnerOrFallback(workspace: string): Promise<SandboxUser> {
  const owner = await stat(workspace);
  return owner.uid === 0 ? fallbackSandboxUser : { uid: owner.uid, gid: owner.gid };
}

function containerName(runId: string): string {
  const readable = runId.replace(/[^A-Za-z0-9_.-]+/g, '-').slice(0, 40);
  return `manus-sandbox-${readable}-${randomBytes(3).toString('hex')}`;
}

function environmentPairs(environment: Record<string, string>): string[] {
  return Object.entries(environment).map(([name, value]) => `${name}=${value}`);
}

function collectInto(output: BoundedOutput): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      output.write(chunk);
      callback();
    },
  });
}

/** Settles when the stream has ended or closed, whichever comes first. */
function endOf(stream: Duplex): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || stream.readableEnded) resolve();
    stream.once('end', resolve);
    stream.once('close', resolve);
  });
}

/** Like `endOf`, but gives up after `deadlineMs`: the stream is destroyed and the result is false. */
async function endWithin(stream: Duplex, deadlineMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), deadlineMs);
  });
  const ended = await Promise.race([endOf(stream).then(() => true as const), deadline]);
  clearTimeout(timer);
  if (!ended) stream.destroy();
  return ended;
}

/**
 * A container's own folders are made by the daemon, open to pass, so only the folder's own bits
 * can shut its user out: an opened folder it may not open is bound entry by entry into a folder
 * the daemon makes, each entry keeping its bits. Symbolic links among them are left out, since the
 * daemon, as root, would follow them to wherever they point.
 */
async function readOnlyFolderBinds(folders: readonly string[], opened: readonly string[], user: SandboxUser): Promise<string[]> {
  const real = (folder: string) => realpathSync(folder);
  const view = await readOnlyFolderView(folders.map(real), opened.map(real), user);
  return view.folders
    .flatMap((folder) => folder.entries?.filter((entry) => entry.linkTarget === undefined).map((entry) => posix.join(folder.path, entry.name)) ?? [folder.path])
    .map((path) => `${path}:${path}:ro`);
}

/** The proxy's two sockets, each bound alone: the 0700 folder that holds them on the host stays closed. */
function egressBinds(egress: SandboxEgress): string[] {
  const sockets = bridgeSockets(egressFolder);
  return [`${egress.httpSocket}:${sockets.http}`, `${egress.socksSocket}:${sockets.socks}`];
}
