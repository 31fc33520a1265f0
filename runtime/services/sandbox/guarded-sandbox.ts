/**
 * The run's sandbox as tools see it: every command is followed by a check of the protected paths
 * (and a session's next exchange is preceded by one, which catches what background jobs did in
 * between). A change is undone and stops the run with a PermissionDeniedError, whatever the
 * sandbox kind; on the host, where nothing can be prevented, this check is the control.
 */
import type { ProtectedPathGuard } from '../../contract/protected-path-guard.js';
import type {
  Sandbox,
  SandboxCommand,
  SandboxCommandOptions,
  SandboxCommandResult,
  SandboxSession,
  SandboxSessionOptions,
} from '../../contract/sandbox-types.js';

export class GuardedSandbox implements Sandbox {
  constructor(
    private readonly inner: Sandbox,
    private readonly protectedPaths: ProtectedPathGuard,
  ) {}

  get kind(): Sandbox['kind'] {
    return this.inner.kind;
  }

  get workspacePath(): string {
    return this.inner.workspacePath;
  }

  async run(command: SandboxCommand, options: SandboxCommandOptions): Promise<SandboxCommandResult> {
    await this.protectedPaths.verify();
    try {
      return await this.inner.run(command, options);
    } finally {
      await this.protectedPaths.verify();
    }
  }

  async spawnSession(command: SandboxCommand, options?: SandboxSessionOptions): Promise<SandboxSession> {
    await this.protectedPaths.verify();
    return this.inner.spawnSession(command, options);
  }

  async refreshWorkspaceAccess(): Promise<void> {
    await this.protectedPaths.verify();
    await this.inner.refreshWorkspaceAccess();
  }

  async afterCommand(): Promise<void> {
    try {
      await this.inner.afterCommand();
    } finally {
      await this.protectedPaths.verify();
    }
  }

  dispose(): Promise<void> {
    return this.inner.dispose();
  }
}
