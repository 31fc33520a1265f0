/**
 * bubblewrap: each command runs in fresh namespaces (no network unless allowed, its own process
 * tree, its own tmpfs on /tmp) on a read-only view of the host, with the workspace bound
 * writable at its own path. Limits come from `prlimit` inside the sandbox: address space per
 * process (memory_mb) and number of processes (pids, RLIMIT_NPROC), which stops a fork bomb.
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
import { stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { resolveCommandFolder } from './command-folder.js';
import { toArgv } from './command-line.js';
import { ProcessGroups } from './process-groups.js';
import { sandboxEnvironment } from './sandbox-environment.js';
import { fallbackSandboxUser, type SandboxOptions, type SandboxUser } from './sandbox-options.js';
import type {
  Sandbox,
  SandboxCommand,
  SandboxCommandOptions,
  SandboxCommandResult,
  SandboxSession,
  SandboxSessionOptions,
} from '../../contract/sandbox-types.js';
import type { ProtectedPathGuard } from '../../contract/protected-path-guard.js';
import { ProtectedMounts, type ProtectedMountSet } from './protected-mounts.js';
import {
  grantWorkspaceAccess,
  returnWorkspaceAccess,
  runtimeIsRoot,
  userCanTraverse,
  workspaceOwner,
  type OriginalOwner,
  type WorkspaceAccessOptions,
} from './workspace-access.js';

export interface BwrapSandboxSettings {
  workspace: string;
  network: boolean;
  options: Pick<SandboxOptions, 'memoryMb' | 'pids' | 'user' | 'passEnvironment'>;
  protectedPaths?: ProtectedPathGuard;
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
}

const temporaryFolder = '/tmp';

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
  ) {
    this.workspacePath = layout.workspace;
    this.environment = sandboxEnvironment('bwrap', passEnvironment);
    this.mounts = new ProtectedMounts(layout.workspace, protectedPaths);
    this.access = {
      skip: protectedPaths ? (path) => protectedPaths.protectionOf(path) !== undefined : undefined,
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
    };
    return new BwrapSandbox(layout, settings.options.passEnvironment, owner, settings.protectedPaths);
  }

  async run(command: SandboxCommand, options: SandboxCommandOptions): Promise<SandboxCommandResult> {
    const argv = toArgv(command);
    const folder = await resolveCommandFolder(this.workspacePath, options.cwd);
    await this.refreshWorkspaceAccess();
    const mounts = await this.mounts.acquire();
    try {
      return await this.groups.run(bwrapCommandLine(this.layout, folder.hostPath, argv, mounts.readOnly), {
        ...options,
        cwd: this.workspacePath,
        env: { ...this.environment, ...options.env },
        statusEncodesSignal: true,
      });
    } finally {
      await mounts.release();
      await this.afterCommand();
    }
  }

  async spawnSession(command: SandboxCommand, options: SandboxSessionOptions = {}): Promise<SandboxSession> {
    const argv = toArgv(command);
    const folder = await resolveCommandFolder(this.workspacePath, options.cwd);
    await this.refreshWorkspaceAccess();
    const mounts = await this.mounts.acquire();
    try {
      const session = await this.groups.spawnSession(bwrapCommandLine(this.layout, folder.hostPath, argv, mounts.readOnly, options.readOnlyFolders), {
        cwd: this.workspacePath,
        env: { ...this.environment, ...options.env },
        statusEncodesSignal: true,
      });
      this.sessionMounts.add(mounts);
      void session.exited.then(() => this.releaseSessionMounts(mounts));
      return session;
    } catch (error) {
      await mounts.release();
      throw error;
    }
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
 * `readOnlyPaths` inside the workspace are mounted read-only over it. `readOnlyFolders` are host
 * folders shown read-only under the workspace's mount, which they may contain.
 */
export function bwrapCommandLine(layout: BwrapLayout, workingFolder: string, argv: string[], readOnlyPaths: readonly string[] = [], readOnlyFolders: readonly string[] = []): string[] {
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
  return [
    'bwrap',
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--perms', '1777', '--tmpfs', temporaryFolder,
    ...layout.hiddenFolders.flatMap((folder) => ['--perms', '0755', '--tmpfs', folder]),
    // Folders on the way to one under the sandbox's own /tmp are made passable, as for the workspace.
    ...readOnlyFolders.flatMap((folder) => [
      ...ancestorsOf(folder).filter((ancestor) => isWithin(temporaryFolder, ancestor)).flatMap((ancestor) => ['--perms', '0755', '--dir', ancestor]),
      '--ro-bind', folder, folder,
    ]),
    ...foldersToCreate(layout).flatMap((folder) => ['--perms', '0755', '--dir', folder]),
    '--bind', layout.workspace, layout.workspace,
    ...readOnlyPaths.flatMap((path) => ['--ro-bind', path, path]),
    ...namespaces,
    '--die-with-parent',
    '--new-session',
    ...capabilities,
    '--chdir', workingFolder,
    '--',
    ...dropToUser,
    'prlimit', `--nproc=${layout.pids}`, `--as=${layout.memoryMb * 1024 * 1024}`, '--',
    ...argv,
  ];
}

/** Every folder above `path`, outermost first, without the root. */
function ancestorsOf(path: string): string[] {
  const ancestors: string[] = [];
  for (let folder = dirname(path); folder !== dirname(folder); folder = dirname(folder)) ancestors.unshift(folder);
  return ancestors;
}

function isWithin(folder: string, path: string): boolean {
  return path.startsWith(`${folder}/`);
}

/**
 * The folders between a tmpfs and the workspace mounted inside it. bwrap would create them
 * readable by root alone; created explicitly they are open for the sandbox user to pass.
 */
function foldersToCreate(layout: BwrapLayout): string[] {
  const base = [temporaryFolder, ...layout.hiddenFolders].find((folder) => isWithin(folder, layout.workspace));
  if (!base) return [];
  return ancestorsOf(layout.workspace).filter((folder) => isWithin(base, folder));
}

/**
 * The highest folder above the workspace that `user` cannot pass through, if any. Folders under
 * /tmp need no cover: the sandbox's own tmpfs replaces them.
 */
async function foldersToHide(workspace: string, user: SandboxUser): Promise<string[]> {
  for (const folder of ancestorsOf(workspace)) {
    if (folder === temporaryFolder || isWithin(temporaryFolder, folder)) return [];
    if (!userCanTraverse(user, await stat(folder))) return [folder];
  }
  return [];
}
