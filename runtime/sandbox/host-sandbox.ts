/**
 * No isolation: commands run on the host as the runtime's user, with the workspace as working
 * folder. Each command and session gets its own process group, so a timeout still ends every
 * process it started. Memory and process limits are the bwrap and docker sandboxes' job.
 */
import { realpathSync } from 'node:fs';
import { resolveCommandFolder } from './command-folder.js';
import { toArgv } from './command-line.js';
import { ProcessGroups } from './process-groups.js';
import { sandboxEnvironment } from './sandbox-environment.js';
import type { SandboxOptions } from './sandbox-options.js';
import type {
  Sandbox,
  SandboxCommand,
  SandboxCommandOptions,
  SandboxCommandResult,
  SandboxSession,
  SandboxSessionOptions,
} from './sandbox-types.js';

export class HostSandbox implements Sandbox {
  readonly kind = 'host';
  readonly workspacePath: string;
  private readonly environment: Record<string, string>;
  private readonly groups = new ProcessGroups();

  constructor(workspace: string, options: Pick<SandboxOptions, 'passEnvironment'>) {
    this.workspacePath = realpathSync(workspace);
    this.environment = sandboxEnvironment('host', options.passEnvironment);
  }

  async run(command: SandboxCommand, options: SandboxCommandOptions): Promise<SandboxCommandResult> {
    const folder = await resolveCommandFolder(this.workspacePath, options.cwd);
    return this.groups.run(toArgv(command), { ...options, cwd: folder.hostPath, env: { ...this.environment, ...options.env } });
  }

  async spawnSession(command: SandboxCommand, options: SandboxSessionOptions = {}): Promise<SandboxSession> {
    const folder = await resolveCommandFolder(this.workspacePath, options.cwd);
    return this.groups.spawnSession(toArgv(command), { cwd: folder.hostPath, env: { ...this.environment, ...options.env } });
  }

  async refreshWorkspaceAccess(): Promise<void> {}

  /** Nothing changes owner on the host; the run's sandbox checks the protected paths (see guarded-sandbox.ts). */
  async afterCommand(): Promise<void> {}

  async dispose(): Promise<void> {
    await this.groups.killAll();
  }
}
