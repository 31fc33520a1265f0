/**
 * No isolation: commands run on the host as the runtime's user, with the workspace as working
 * folder. What it does guarantee is that nothing a command starts outlives it: each command has
 * its own process group and, where the system allows, its own PID namespace that dies with it
 * and with the runtime (see host-containment.ts), and a root runtime gives each command a cgroup
 * with memory and process limits. Running commands are recorded in the run folder, so those of
 * a runtime that was killed are ended at the next start.
 */
import { readFile } from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { resolveCommandFolder } from './command-folder.js';
import { toArgv } from './command-line.js';
import { commandCgroupWithin, removeCommandCgroup } from './host-cgroups.js';
import { containedCommandLine, probeHostContainment, type HostContainment } from './host-containment.js';
import { ProcessGroups } from './process-groups.js';
import { processStartTime, ProcessRecords } from './process-records.js';
import { sandboxEnvironment } from './sandbox-environment.js';
import type { SandboxOptions } from './sandbox-options.js';
import type {
  Sandbox,
  SandboxCommand,
  SandboxCommandOptions,
  SandboxCommandResult,
  SandboxSession,
  SandboxSessionOptions,
} from '../../contract/sandbox-types.js';

export interface HostSandboxSettings {
  workspace: string;
  /** The run's folder, where running commands are recorded; without it nothing is recorded. */
  runDirectory?: string;
  options: Pick<SandboxOptions, 'passEnvironment' | 'memoryMb' | 'pids'>;
}

/** How one command is started and cleaned up after. */
interface CommandScope {
  argv: string[];
  statusEncodesSignal: boolean;
  onStart: (processGroup: number) => void;
  end: () => Promise<void>;
}

/** How often, and how many times, to look for the namespace's first process after a start. */
const initLookupIntervalMs = 10;
const initLookupAttempts = 100;

export class HostSandbox implements Sandbox {
  readonly kind = 'host';
  readonly workspacePath: string;
  private readonly environment: Record<string, string>;
  private readonly groups = new ProcessGroups();
  private readonly records: ProcessRecords | undefined;
  private readonly limits: { memoryMb: number; pids: number };
  /** Clean-ups of sessions that have ended or are ending; dispose waits for them. */
  private readonly endings = new Set<Promise<void>>();

  private constructor(
    settings: HostSandboxSettings,
    private readonly containment: HostContainment,
  ) {
    this.workspacePath = realpathSync(settings.workspace);
    this.environment = sandboxEnvironment('host', settings.options.passEnvironment);
    this.records = settings.runDirectory ? new ProcessRecords(settings.runDirectory) : undefined;
    this.limits = { memoryMb: settings.options.memoryMb, pids: settings.options.pids };
  }

  static async create(settings: HostSandboxSettings): Promise<HostSandbox> {
    return new HostSandbox(settings, await probeHostContainment());
  }

  async run(command: SandboxCommand, options: SandboxCommandOptions): Promise<SandboxCommandResult> {
    const folder = await resolveCommandFolder(this.workspacePath, options.cwd);
    const scope = await this.begin(toArgv(command));
    try {
      return await this.groups.run(scope.argv, {
        ...options,
        cwd: folder.hostPath,
        env: { ...this.environment, ...options.env },
        statusEncodesSignal: scope.statusEncodesSignal,
        onStart: scope.onStart,
      });
    } finally {
      await scope.end();
    }
  }

  async spawnSession(command: SandboxCommand, options: SandboxSessionOptions = {}): Promise<SandboxSession> {
    const folder = await resolveCommandFolder(this.workspacePath, options.cwd);
    const scope = await this.begin(toArgv(command));
    let session: SandboxSession;
    try {
      session = await this.groups.spawnSession(scope.argv, {
        cwd: folder.hostPath,
        env: { ...this.environment, ...options.env },
        statusEncodesSignal: scope.statusEncodesSignal,
        onStart: scope.onStart,
      });
    } catch (error) {
      await scope.end();
      throw error;
    }
    const ending = session.exited.then(() => scope.end());
    this.endings.add(ending);
    void ending.then(() => this.endings.delete(ending));
    return session;
  }

  async refreshWorkspaceAccess(): Promise<void> {}

  /** Nothing changes owner on the host; the run's sandbox checks the protected paths (see guarded-sandbox.ts). */
  async afterCommand(): Promise<void> {}

  async dispose(): Promise<void> {
    await this.groups.killAll();
    await Promise.all([...this.endings]);
  }

  private async begin(argv: string[]): Promise<CommandScope> {
    const place = this.containment.cgroups;
    const cgroup = place ? await commandCgroupWithin(place, this.limits) : undefined;
    const line = containedCommandLine(this.containment, argv, cgroup);
    let processGroup: number | undefined;
    let ended = false;
    return {
      ...line,
      onStart: (pid) => {
        processGroup = pid;
        if (this.records?.add(pid, cgroup?.folders) && this.containment.namespace) void this.recordNamespaceInit(pid, () => ended);
      },
      end: async () => {
        ended = true;
        try {
          if (cgroup) await removeCommandCgroup(cgroup);
        } catch {
          // The record stays, so the next start kills what is left in the cgroup and removes it.
          return;
        }
        if (processGroup !== undefined) this.records?.remove(processGroup);
      },
    };
  }

  /**
   * Adds the namespace's first process to the record once `unshare` has forked it. Killing it is
   * what ends the namespace, should `unshare` itself be gone.
   */
  private async recordNamespaceInit(processGroup: number, hasEnded: () => boolean): Promise<void> {
    for (let attempt = 0; attempt < initLookupAttempts && !hasEnded(); attempt += 1) {
      const children = await readFile(`/proc/${processGroup}/task/${processGroup}/children`, 'utf8').catch(() => '');
      const init = Number(children.trim().split(' ')[0]);
      const startTime = init > 0 ? processStartTime(init) : undefined;
      if (startTime !== undefined) {
        if (!hasEnded()) this.records?.setNamespaceInit(processGroup, { pid: init, startTime });
        return;
      }
      await delay(initLookupIntervalMs);
    }
  }
}
