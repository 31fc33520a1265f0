/**
 * The sandbox of the current run, shared by every code-running tool: bash and python_execute
 * use one container or one set of limits, and the runtime disposes it at the end of the run.
 */
import type { ToolContext } from '../tool.js';
import { createSandbox } from './create-sandbox.js';
import type { Sandbox } from './sandbox-types.js';

export const sandboxResourceKey = 'sandbox';

export function sandboxForRun(
  context: Pick<ToolContext, 'resources' | 'sandboxSettings' | 'workspace' | 'runDirectory' | 'runId'>,
): Promise<Sandbox> {
  return context.resources.get<Sandbox>(
    sandboxResourceKey,
    async () =>
      createSandbox({
        ...(await context.sandboxSettings()),
        workspace: context.workspace,
        runDirectory: context.runDirectory,
        runId: context.runId,
      }),
    (sandbox) => sandbox.dispose(),
  );
}
