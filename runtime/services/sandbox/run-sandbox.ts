/**
 * The sandbox of the current run, shared by every code-running tool: bash and python_execute
 * use one container or one set of limits, and the runtime disposes it at the end of the run.
 * With the run's protected paths it mounts them read-only and checks them after each command.
 * With an allowlist (`sandbox.network: {allow: [...]}`), its commands reach the named hosts
 * through the run's egress proxy and nothing else; on the host nothing can hold them to it.
 */
import type { ToolContext } from '../../contract/tool.js';
import type { SandboxEgress } from '../../contract/sandbox-types.js';
import { createSandbox } from './create-sandbox.js';
import { GuardedSandbox } from './guarded-sandbox.js';
import type { Sandbox } from '../../contract/sandbox-types.js';

export const sandboxResourceKey = 'sandbox';

export function sandboxForRun(
  context: Pick<ToolContext, 'resources' | 'sandboxSettings' | 'workspace' | 'runDirectory' | 'runId' | 'protectedPaths'> & Partial<Pick<ToolContext, 'network' | 'trace'>>,
): Promise<Sandbox> {
  return context.resources.get<Sandbox>(
    sandboxResourceKey,
    async () => {
      const settings = await context.sandboxSettings();
      const sandbox = await createSandbox({
        ...settings,
        workspace: context.workspace,
        runDirectory: context.runDirectory,
        runId: context.runId,
        protectedPaths: context.protectedPaths,
        egress: await sandboxEgress(context, settings.kind),
      });
      return context.protectedPaths ? new GuardedSandbox(sandbox, context.protectedPaths) : sandbox;
    },
    (sandbox) => sandbox.dispose(),
  );
}

async function sandboxEgress(context: Partial<Pick<ToolContext, 'network' | 'trace'>>, kind: string): Promise<SandboxEgress | undefined> {
  const egress = context.network?.egress;
  if (!egress) return undefined;
  if (kind === 'host') {
    context.trace?.emit('run-warning', {
      message: `commands run on the host, where nothing holds them to the allowed hosts (${egress.hosts.join(', ')}): they reach whatever the host reaches. Use the bwrap or docker sandbox to hold them to the list.`,
    });
    return undefined;
  }
  const proxy = await egress.proxy();
  return { httpSocket: proxy.httpSocket, socksSocket: proxy.socksSocket, watchCommand: (command) => egress.watchCommand(command) };
}
