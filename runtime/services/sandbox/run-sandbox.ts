/**
 * The sandbox of the current run, shared by every code-running tool: bash and python_execute
 * use one container or one set of limits, and the runtime disposes it at the end of the run.
 * With the run's protected paths it mounts them read-only and checks them after each command.
 */
import type { ToolContext } from '../../contract/tool.js';
import { createSandbox } from './create-sandbox.js';
import { GuardedSandbox } from './guarded-sandbox.js';
import type { Sandbox } from '../../contract/sandbox-types.js';

export const sandboxResourceKey = 'sandbox';

export function sandboxForRun(
  context: Pick<ToolContext, 'resources' | 'sandboxSettings' | 'workspace' | 'runDirectory' | 'runId' | 'protectedPaths'>,
): Promise<Sandbox> {
  return context.resources.get<Sandbox>(
    sandboxResourceKey,
    async () => {
      const sandbox = await createSandbox({
        ...(await context.sandboxSettings()),
        workspace: context.workspace,
        runDirectory: context.runDirectory,
        runId: context.runId,
        protectedPaths: context.protectedPaths,
      });
      return context.protectedPaths ? new GuardedSandbox(sandbox, context.protectedPaths) : sandbox;
    },
    (sandbox) => sandbox.dispose(),
  );
}
