/**
 * bubblewrap: each command runs in fresh namespaces (no network unless allowed, its own process
 * tree, its own tmpfs on /tmp) on a read-only view of the host, with the workspace bound
 * writable at its own path. Limits come from `prlimit` inside the sandbox: address space per
 * process (memory_mb) and number of processes (pids, RLIMIT_NPROC), which stops a fork bomb.
 * A root runtime that can make cgroups (host-cgroups.ts) also puts each command in one of its
 * own, which holds all its processes together to memory_mb and pids: without it, four processes
 * may each take memory_mb.
 *
 * RLIMIT_NPROC does not apply to root. A root runtime therefore runs bwrap privileged without a
 * user namespace, and the command itself as an unprivileged user (sandbox.user, default
 * 65534:65534) through `setpriv`, with every capability gone. That user is given the workspace
 * for the time of each command, and afterwards every entry goes back to its owner (what the
 * command created, to the workspace's owner); any folder above the workspace it could not pass
 * through is covered by an empty tmpfs (its contents were unreadable to that user anyway). An
 * unprivileged runtime uses an unprivileged user namespace and stays itself.
 *
 * Protected paths inside the workspace (plugin folders, agents.yaml, `.git/hooks`, ...) are
 * mounted read-only over the writable workspace; see protected-mounts.ts.
 */
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { ancestorsOf, highestClosedFolder, isWithin, readOnlyFolderView, temporaryFolder, type ReadOnlyFolder, type ReadOnlyFolderView } from './bwrap-folders.js';
import { resolveCommandFolder } from './command-folder.js';
import { toArgv } from './command-line.js';
import { commandCgroupWithin, enterCgroupCommandLine, probeCgroups, removeCommandCgroup, type CgroupPlace, type CommandCgroup } from './host-cgroups.js';
import { ProcessGroups } from './process-groups.js';
import { sandboxEnvironment } from './sandbox-environment.js';
import { awaitBridgeScript, behindBridge, bridgeSockets, commandText, egressEnvironment, startBridgeScript, withRefusalLines } from './egress-bridge.js';
import { fallbackSandboxUser, type SandboxOptions, type SandboxUser } from './sandbox-options.js';
import type {
  Sandbox,
  SandboxCommand,
  SandboxCommandOptions,
  SandboxCommandResult,
  SandboxEgress,
  SandboxSession,
  SandboxSessionOptions,
} from '../../contract/sandbox-types.js';
import type { ProtectedPathGuard } from '../../contract/protected-path-guard.js';
import { ProtectedMounts, type ProtectedMountSet } from './protected-mounts.js';
import {
  grantWorkspaceAccess,
  returnWorkspaceAccess,
  runtimeIsRoot,
  workspaceOwner,
  type OriginalOwner,
  type WorkspaceAccessOptions,
} from './workspace-access.js';

export interface BwrapSandboxSettings {
  workspace: string;
  network: boolean;
  options: Pick<SandboxOptions, 'memoryMb' | 'pids' | 'user' | 'passEnvironment'>;
  protectedPaths?: ProtectedPathGuard;
  egress?: SandboxEgress;
}

/** What the bwrap command line is built from. */
export interface BwrapLayout {
  workspace: string;
  network: boolean;
  memoryMb: number;
  pids: number;
  /** Set when the runtime is root: the command drops to this user. */
  user: SandboxUser | undefined;
  /** Folders above the workspace covered by an empty tmpfs so the user can reach the workspace. */
  hiddenFolders: string[];
  /** Where each command gets a cgroup holding all its processes to the limits; undefined without one. */
  cgroups?: CgroupPlace;
  /** The egress proxy's sockets on the host, bridged into each command's network namespace. */
  egress?: { httpSocket: string; socksSocket: string };
}

/** Where the egress proxy's sockets appear inside the sandbox: a folder of its own in the sandbox's /tmp. */
const egressFolder = `${temporaryFolder}/.manus-egress`;

export class BwrapSandbox implements Sandbox {
  readonly kind = 'bwrap';
  readonly workspacePath: string;
  private readonly groups = new ProcessGroups();
  private readonly environment: Record<string, string>;
  private readonly mounts: ProtectedMounts;
  private readonly access: WorkspaceAccessOptions;
  /** Placeholders of sessions still running, released when they exit or at dispose. */
  private readonly sessionMounts = new Set<ProtectedMountSet>();

  private constructor(
    private readonly layout: BwrapLayout,
    passEnvironment: string[],
    private readonly owner: SandboxUser | undefined,
    protectedPaths: ProtectedPathGuard | undefined,
    private readonly egress: SandboxEgress | undefined,
  ) {
    this.workspacePath = layout.workspace;
    this.environment = { ...sandboxEnvironment('bwrap', passEnvironment), ...(egress ? egressEnvironment() : {}) };
    this.mounts = new ProtectedMounts(layout.workspace, protectedPaths);
    this.access = {
      skip: protectedPaths ? (path) => protectedPaths.protectionOf(path) !== undefined : undefined,
      keepMode: protectedPaths ? (path) => protectedPaths.entries.some((entry) => entry.path === path) : undefined,
      originalOwners: new Map<string, OriginalOwner>(),
    };
  }

  static async create(settings: BwrapSandboxSettings): Promise<BwrapSandbox> {
    const workspace = realpathSync(settings.workspace);
    const user = runtimeIsRoot() ? (settings.options.user ?? fallbackSandboxUser) : undefined;
    const owner = user ? await workspaceOwner(workspace) : undefined;
    const layout: BwrapLayout = {
      workspace,
      network: settings.network,
      memoryMb: settings.options.memoryMb,
      pids: settings.options.pids,
      user,
      hiddenFolders: user ? await foldersToHide(workspace, user) : [],
      cgroups: user ? await probeCgroups().then((found) => (found.usable ? found.place : undefined)) : undefined,
      ...(settings.egress ? { egress: { httpSocket: settings.egress.httpSocket, socksSocket: settings.egress.socksSocket } } : {}),
    };
    return new BwrapSandbox(layout, settings.options.passEnvironment, owner, settings.protectedPaths, settings.egress);
  }

  async run(command: SandboxCommand, options: SandboxCommandOptions): Promise<SandboxCommandResult> {
    const argv = toArgv(command);
    const folder = await resolveCommandFolder(this.workspacePath, options.cwd);
    await this.refreshWorkspaceAccess();
    const mounts = await this.mounts.acquire();
    const watch = this.egress?.watchCommand(commandText(argv));
    let cgroup: CommandCgroup | undefined;
    try {
      cgroup = await this.commandCgroup();
      const result = await this.groups.run(enterCgroupCommandLine(cgroup, bwrapCommandLine(this.layout, folder.hostPath, argv, mounts.readOnly, undefined, mounts.pinned)), {
        ...options,
        cwd: this.workspacePath,
        env: { ...this.environment, ...options.env },
        statusEncodesSignal: true,
      });
      return watch ? withRefusalLines(result, watch.refusals()) : result;
    } finally {
      watch?.end();
      if (cgroup) await removeCommandCgroup(cgroup).catch(() => undefined);
      await mounts.release();
      await this.afterCommand();
    }
  }

  async spawnSession(command: SandboxCommand, options: SandboxSessionOptions = {}): Promise<SandboxSession> {
    const argv = toArgv(command);
    const folder = await resolveCommandFolder(this.workspacePath, options.cwd);
    const folders = await readOnlyFolderView(options.readOnlyFolders ?? [], options.openedFolders ?? [], this.layout.user);
    await this.refreshWorkspaceAccess();
    const mounts = await this.mounts.acquire();
    let cgroup: CommandCgroup | undefined;
    const removeCgroup = async () => {
      if (cgroup) await removeCommandCgroup(cgroup).catch(() => undefined);
    };
    try {
      cgroup = await this.commandCgroup();
      const line = bwrapCommandLine(this.layout, folder.hostPath, argv, mounts.readOnly, folders, mounts.pinned);
      const session = await this.groups.spawnSession(enterCgroupCommandLine(cgroup, line), {
        cwd: this.workspacePath,
        env: { ...this.environment, ...options.env },
        statusEncodesSignal: true,
      });
      this.sessionMounts.add(mounts);
      void session.exited.then(async () => {
        await removeCgroup();
        await this.releaseSessionMounts(mounts);
      });
      return session;
    } catch (error) {
      await removeCgroup();
      await mounts.release();
      throw error;
    }
  }

  private async commandCgroup(): Promise<CommandCgroup | undefined> {
    const place = this.layout.cgroups;
    if (!place) return undefined;
    return commandCgroupWithin(place, { memoryMb: this.layout.memoryMb, pids: this.layout.pids });
  }

  async refreshWorkspaceAccess(): Promise<void> {
    if (this.layout.user) await grantWorkspaceAccess(this.workspacePath, this.layout.user, this.access);
  }

  async afterCommand(): Promise<void> {
    if (this.layout.user && this.owner) await returnWorkspaceAccess(this.workspacePath, this.layout.user, this.owner, this.access);
  }

  async dispose(): Promise<void> {
    await this.groups.killAll();
    for (const mounts of [...this.sessionMounts]) await this.releaseSessionMounts(mounts);
    await this.afterCommand();
  }

  private async releaseSessionMounts(mounts: ProtectedMountSet): Promise<void> {
    this.sessionMounts.delete(mounts);
    await mounts.release();
  }
}

/**
 * The full command line: bwrap <namespaces and mounts> -- [setpriv <user>] prlimit <limits> -- argv.
 * `readOnlyPaths` inside the workspace are mounted read-only over it. `folders` are host folders
 * shown read-only at their own paths, which may hold the workspace or lie in it. `pinnedFolders`
 * are bound writable onto themselves, which keeps them from being renamed or removed.
 */
export function bwrapCommandLine(
  layout: BwrapLayout,
  workingFolder: string,
  argv: string[],
  readOnlyPaths: readonly string[] = [],
  folders: ReadOnlyFolderView = { folders: [], covers: [] },
  pinnedFolders: readonly string[] = [],
): string[] {
  const { user, network } = layout;
  const namespaces = user
    ? ['--unshare-ipc', '--unshare-pid', '--unshare-uts', '--unshare-cgroup-try', ...(network ? [] : ['--unshare-net'])]
    : ['--unshare-all', '--unshare-user', '--disable-userns', ...(network ? ['--share-net'] : [])];
  // setpriv needs the first three to change user, and bwrap the last to enter a workspace only that
  // user may open; changing away from root then clears every capability.
  const capabilities = user
    ? ['--cap-drop', 'ALL', ...['CAP_SETUID', 'CAP_SETGID', 'CAP_SETPCAP', 'CAP_DAC_READ_SEARCH'].flatMap((name) => ['--cap-add', name])]
    : ['--cap-drop', 'ALL'];
  const dropToUser = user
    ? ['setpriv', `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--bounding-set=-all', '--inh-caps=-all', '--no-new-privs', '--']
    : [];
  const sockets = bridgeSockets(egressFolder);
  // The sockets alone, not the 0700 folder that holds them on the host.
  const egressMounts = layout.egress
    ? ['--perms', '0755', '--dir', egressFolder, '--bind', layout.egress.httpSocket, sockets.http, '--bind', layout.egress.socksSocket, sockets.socks]
    : [];
  // socat runs as the command's user, in the command's own network namespace, and ends with it.
  const command = layout.egress ? behindBridge(`${startBridgeScript(egressFolder)}${awaitBridgeScript()}`, argv) : argv;
  return [
    'bwrap',
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--perms', '1777', '--tmpfs', temporaryFolder,
    ...egressMounts,
    ...coversOf([...layout.hiddenFolders, ...folders.covers]).flatMap((folder) => ['--perms', '0755', '--tmpfs', folder]),
    ...placedFolders(layout, folders),
    ...pinnedFolders.flatMap((path) => ['--bind', path, path]),
    ...readOnlyPaths.flatMap((path) => ['--ro-bind', path, path]),
    ...namespaces,
    '--die-with-parent',
    '--new-session',
    ...capabilities,
    '--chdir', workingFolder,
    '--',
    ...dropToUser,
    'prlimit', `--nproc=${layout.pids}`, `--as=${layout.memoryMb * 1024 * 1024}`, '--',
    ...command,
  ];
}

/** Each folder to cover once, outermost first; one inside another cover or /tmp is covered already. */
function coversOf(folders: string[]): string[] {
  const unique = [...new Set(folders)];
  return unique
    .filter((folder) => ![temporaryFolder, ...unique].some((other) => isWithin(other, folder)))
    .sort((first, second) => first.length - second.length);
}

/**
 * The workspace and the read-only folders, outer ones first, so that one inside another is
 * mounted over it (a workspace in the launch folder stays writable). The folders on the way to
 * each through fresh folders (/tmp, a cover, an opened folder) are made, open for the sandbox's
 * user to pass: bwrap would make them readable by root alone.
 */
function placedFolders(layout: BwrapLayout, view: ReadOnlyFolderView): string[] {
  const placements: Array<{ path: string; mounts: string[] }> = [
    ...view.folders.map((folder) => ({ path: folder.path, mounts: folderMounts(folder) })),
    { path: layout.workspace, mounts: ['--bind', layout.workspace, layout.workspace] },
  ];
  placements.sort((first, second) => depthOf(first.path) - depthOf(second.path));
  const fresh = [temporaryFolder, ...layout.hiddenFolders, ...view.covers, ...view.folders.filter((folder) => folder.entries).map((folder) => folder.path)];
  return placements.flatMap(({ path, mounts }) => [
    ...ancestorsOf(path).filter((ancestor) => fresh.some((folder) => isWithin(folder, ancestor))).flatMap((ancestor) => ['--perms', '0755', '--dir', ancestor]),
    ...mounts,
  ]);
}

function folderMounts(folder: ReadOnlyFolder): string[] {
  if (!folder.entries) return ['--ro-bind', folder.path, folder.path];
  return [
    '--perms', '0755', '--tmpfs', folder.path,
    ...folder.entries.flatMap((entry) => {
      const path = join(folder.path, entry.name);
      return entry.linkTarget === undefined ? ['--ro-bind-try', path, path] : ['--symlink', entry.linkTarget, path];
    }),
    '--remount-ro', folder.path,
  ];
}

function depthOf(path: string): number {
  return path.split('/').length;
}

/** The highest folder above the workspace that `user` cannot pass through, if any. */
async function foldersToHide(workspace: string, user: SandboxUser): Promise<string[]> {
  const folder = await highestClosedFolder(workspace, user);
  return folder ? [folder] : [];
}
