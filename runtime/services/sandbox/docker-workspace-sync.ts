/**
 * The workspace of a container on another machine, which no bind mount can reach: copied into a
 * volume of the container when it starts, what the host changed copied in before each command
 * (the file tools write the host's copy between commands), and what the command changed copied
 * back after it, before any tool reads the host's copy again (workspace-copy-back.ts says what is
 * refused on the way). One copy runs at a time.
 */
import { stat } from 'node:fs/promises';
import { PassThrough, type Duplex, type Readable } from 'node:stream';
import type Dockerode from 'dockerode';
import type { ProtectedPathGuard } from '../../contract/protected-path-guard.js';
import { PermissionDeniedError } from '../../contract/errors.js';
import { SandboxError } from './sandbox-errors.js';
import type { SandboxUser } from './sandbox-options.js';
import { compareListing, listingCommand } from './docker-workspace-listing.js';
import {
  copyBack,
  defaultCopyBackLimits,
  removeUnlisted,
  type CopyBackLimits,
  type CopyBackRefusal,
  type CopyBackReport,
  type CopyBackSettings,
} from './workspace-copy-back.js';
import { packEntries, planCopyIn } from './workspace-copy-in.js';
import type { SyncedState } from './workspace-sync-state.js';

export interface DockerWorkspaceSyncSettings {
  container: Dockerode.Container;
  /** The host's workspace (its real path). */
  workspace: string;
  /** Where the container holds its copy. */
  containerWorkspace: string;
  /** The container's user, who owns the copy there. */
  user: SandboxUser;
  protectedPaths?: ProtectedPathGuard;
  /** Who is given what is copied back, when the runtime runs as root for another user's workspace. */
  owner?: SandboxUser;
  limits?: CopyBackLimits;
}

const root = { uid: 0, gid: 0 };

/** Up to this many changed entries are fetched one by one; past it, the whole workspace at once. */
const separateFetches = 16;
/** A listing longer than this (a workspace far past the copy limit) is not read; the whole copy then stops at its own limit. */
const maximumListingBytes = 64 * 1024 * 1024;

/** Paths per `rm` in the container, well within any argument limit. */
const removalBatch = 500;

export class DockerWorkspaceSync {
  private readonly state: SyncedState = new Map();
  private queue: Promise<unknown> = Promise.resolve();
  private copiedOnce = false;
  /** Refusals of the last copies back, until a command's result reports them. */
  private notices: CopyBackRefusal[] = [];
  private readonly reported = new Set<string>();

  constructor(private readonly settings: DockerWorkspaceSyncSettings) {}

  /**
   * Copies into the container what the host changed since the last copy. The container's user
   * unpacks its own entries, so it owns them as it would have made them; the daemon puts the
   * protected ones, which root then owns.
   */
  copyIn(): Promise<void> {
    return this.serialised(async () => {
      const { workspace, container, containerWorkspace } = this.settings;
      const plan = await planCopyIn({ workspace, state: this.state, protectedPaths: this.settings.protectedPaths });
      try {
        if (!this.copiedOnce) await this.openWorkspaceFolder();
        if (plan.owned.length > 0) await this.unpackAsUser(await packEntries(workspace, plan.owned, this.settings.user));
        if (plan.protected.length > 0) await container.putArchive(await packEntries(workspace, plan.protected, root), { path: containerWorkspace });
        if (plan.removed.length > 0) await this.removeInContainer(plan.removed);
      } catch (error) {
        throw new SandboxError('sandbox_failed', `Could not copy the workspace into the sandbox container: ${(error as Error).message}`);
      }
      plan.commit();
      this.copiedOnce = true;
    });
  }

  /**
   * Copies back what the container changed. A listing of the container's workspace says what that
   * is: nothing, a few entries (fetched one by one), or many (the whole workspace is fetched). A
   * change to a protected path is not copied and stops the run with a PermissionDeniedError; other
   * refusals are kept for `takeNotice`.
   */
  copyBack(): Promise<CopyBackReport> {
    return this.serialised(async () => {
      const listing = await this.execute(listingCommand, undefined, undefined, maximumListingBytes).catch(() => undefined);
      const changes = listing?.exitCode === 0 ? compareListing(listing.output, this.state) : undefined;
      let report: CopyBackReport;
      try {
        if (changes && changes.changed.length === 0) report = await removeUnlisted(changes.listed, this.copyBackSettings());
        else if (changes && changes.changed.length <= separateFetches) report = await this.copyPaths(changes.changed, changes.listed);
        else report = await copyBack(await this.archiveOf(''), this.copyBackSettings());
        if (changes && changes.changed.length <= separateFetches) {
          for (const path of changes.hardLinked) report.refused.push({ path, reason: 'a hard link (the file has other names in the sandbox) is not copied back', protected: false });
        }
      } catch (error) {
        if (SandboxError.isInstance(error)) throw error;
        throw new SandboxError('sandbox_failed', `Could not copy the workspace back from the sandbox container: ${(error as Error).message}`);
      }
      // An entry left in the container is met again by every copy: it is reported once.
      for (const refusal of report.refused.filter((refusal) => !refusal.protected)) {
        const key = `${refusal.path}\0${refusal.reason}`;
        if (this.reported.has(key)) continue;
        this.reported.add(key);
        this.notices.push(refusal);
      }
      const attempts = report.refused.filter((refusal) => refusal.protected);
      if (attempts.length > 0) {
        throw new PermissionDeniedError(
          `A command in the sandbox changed protected paths, which were not copied back to the workspace, so the run was stopped: ${attempts.map((attempt) => `${attempt.path} (${attempt.reason})`).join('; ')}.`,
        );
      }
      return report;
    });
  }

  /** Fetches each of `paths` apart, sharing one budget of bytes and entries. */
  private async copyPaths(paths: readonly string[], listed: ReadonlySet<string>): Promise<CopyBackReport> {
    const limits = { ...(this.settings.limits ?? defaultCopyBackLimits) };
    const total: CopyBackReport = { written: [], removed: [], refused: [], complete: true, bytes: 0 };
    for (const path of paths) {
      let archive: Readable;
      try {
        archive = await this.archiveOf(path);
      } catch (error) {
        // Gone since the listing: the next copy sees it gone.
        if ((error as { statusCode?: number }).statusCode === 404) continue;
        throw error;
      }
      const report = await copyBack(archive, { ...this.copyBackSettings(), topName: path.split('/').at(-1) as string, topPath: path, listed, limits });
      total.written.push(...report.written);
      total.removed.push(...report.removed);
      total.refused.push(...report.refused);
      total.bytes += report.bytes;
      limits.maximumBytes -= report.bytes;
      if (!report.complete) {
        total.complete = false;
        break;
      }
    }
    return total;
  }

  private async archiveOf(path: string): Promise<Readable> {
    const containerPath = path === '' ? this.settings.containerWorkspace : `${this.settings.containerWorkspace}/${path}`;
    return (await this.settings.container.getArchive({ path: containerPath })) as Readable;
  }

  private copyBackSettings(): CopyBackSettings {
    return {
      workspace: this.settings.workspace,
      topName: this.settings.containerWorkspace.split('/').filter(Boolean).at(-1) as string,
      state: this.state,
      protectedPaths: this.settings.protectedPaths,
      owner: this.settings.owner,
      limits: this.settings.limits,
    };
  }

  /** The refusals since the last call, as a line for a command's output. */
  takeNotice(): string | undefined {
    if (this.notices.length === 0) return undefined;
    const shown = this.notices.slice(0, 20).map((refusal) => `${refusal.path}: ${refusal.reason}`);
    const more = this.notices.length > shown.length ? `; and ${this.notices.length - shown.length} more` : '';
    this.notices = [];
    return `[manus] not copied back from the sandbox to the workspace: ${shown.join('; ')}${more}\n`;
  }

  /**
   * The volume's folder is root's (the daemon makes it, and the archive API leaves the top folder
   * alone): root, which owns it and needs no capability for that, opens it to all, sticky, so the
   * user may add entries but neither remove nor rename root's.
   */
  private async openWorkspaceFolder(): Promise<void> {
    const { exitCode, errors } = await this.execute(['chmod', '1777', this.settings.containerWorkspace], undefined, '0');
    if (exitCode !== 0) throw new Error(`chmod of the container's workspace ended with status ${exitCode}: ${errors.trim().slice(0, 500)}`);
  }

  /** Unpacks `archive` in the container's workspace as the container's user. */
  private async unpackAsUser(archive: Readable): Promise<void> {
    const { exitCode, errors } = await this.execute(['tar', '-x', '-p', '-f', '-', '-C', this.settings.containerWorkspace], archive);
    if (exitCode !== 0) throw new Error(`tar in the container ended with status ${exitCode}: ${errors.trim().slice(0, 500)}`);
  }

  private async removeInContainer(paths: string[]): Promise<void> {
    for (let start = 0; start < paths.length; start += removalBatch) await this.removeBatch(paths.slice(start, start + removalBatch));
  }

  private async removeBatch(paths: string[]): Promise<void> {
    await this.execute(['rm', '-rf', '--', ...paths.map((path) => `${this.settings.containerWorkspace}/${path}`)]);
  }

  /** Runs a command of the runtime's own in the container, as its user unless told, and waits for its status. */
  private async execute(
    command: string[],
    input?: Readable,
    user?: string,
    maximumOutputBytes = 0,
  ): Promise<{ exitCode: number | null; output: Buffer; errors: string }> {
    const exec = await this.settings.container.exec({
      Cmd: command,
      ...(user === undefined ? {} : { User: user }),
      WorkingDir: this.settings.containerWorkspace,
      AttachStdin: input !== undefined,
      AttachStdout: true,
      AttachStderr: true,
    });
    const stream = (await exec.start({ hijack: true, stdin: input !== undefined })) as Duplex;
    const errors: Buffer[] = [];
    const output: Buffer[] = [];
    let outputBytes = 0;
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => {
      outputBytes += chunk.length;
      if (outputBytes <= maximumOutputBytes) output.push(chunk);
      else if (maximumOutputBytes > 0) stream.destroy();
    });
    const errorSink = new PassThrough();
    errorSink.on('data', (chunk: Buffer) => errors.push(chunk));
    this.settings.container.modem.demuxStream(stream, sink, errorSink);
    const ended = new Promise<void>((resolve) => {
      stream.once('end', resolve);
      stream.once('close', resolve);
      stream.once('error', () => resolve());
    });
    if (input) {
      input.on('error', () => stream.destroy());
      input.pipe(stream);
    }
    await ended;
    let information = await exec.inspect();
    for (let attempt = 0; information.Running && attempt < 20; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      information = await exec.inspect();
    }
    const exitCode = outputBytes > maximumOutputBytes && maximumOutputBytes > 0 ? null : (information.ExitCode ?? null);
    return { exitCode, output: Buffer.concat(output), errors: Buffer.concat(errors).toString('utf8') };
  }

  private serialised<T>(action: () => Promise<T>): Promise<T> {
    const next = this.queue.then(action, action);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

/** Copies the workspace into a container just started; a failure removes the container. */
export async function startWorkspaceCopy(settings: Omit<DockerWorkspaceSyncSettings, 'owner'>): Promise<DockerWorkspaceSync> {
  const workspaceCopy = new DockerWorkspaceSync({ ...settings, owner: await ownerToGive(settings.workspace) });
  try {
    await workspaceCopy.copyIn();
  } catch (error) {
    await settings.container.remove({ force: true, v: true }).catch(() => undefined);
    throw error;
  }
  return workspaceCopy;
}

/** A session that must see host folders (an MCP server's) cannot have them on another machine. */
export function refuseHostFolders(folders: readonly string[]): void {
  if (folders.length === 0) return;
  throw new SandboxError(
    'sandbox_unavailable',
    `A Docker daemon on another machine cannot see this machine's folders (${folders.join(', ')}); run this server outside the docker sandbox, or use a local daemon.`,
  );
}

/** A root runtime gives what it copies back to the workspace's owner, as it does after a local command. */
async function ownerToGive(workspace: string): Promise<SandboxUser | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const information = await stat(workspace);
  return information.uid === 0 ? undefined : { uid: information.uid, gid: information.gid };
}
