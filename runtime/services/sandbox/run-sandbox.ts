/**
 * The sandbox of the current run, shared by every code-running tool: bash and python_execute
 * use one container or one set of limits, and the runtime disposes it at the end of the run.
 * With the run's protected paths it mounts them read-only and checks them after each command.
 * With an allowlist (`sandbox.network: {allow: [...]}`, or network under the user's
 * `network.only`), its commands reach the named hosts through the run's egress proxy and nothing
 * else; on the host nothing can hold them to it.
 */
import type { ToolContext } from '../../contract/tool.js';
import type { SandboxEgress, SandboxSettings } from '../../contract/sandbox-types.js';
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
      const egress = await sandboxEgress(context, settings);
      const sandbox = await createSandbox({
        ...settings,
        // A sandbox with the whole network (--trust network) under the user's network.only
        // reaches the network only through the proxy, like one that lists its hosts.
        ...(egress ? { network: false } : {}),
        workspace: context.workspace,
        runDirectory: context.runDirectory,
        runId: context.runId,
        protectedPaths: context.protectedPaths,
        egress,
      });
      return context.protectedPaths ? new GuardedSandbox(sandbox, context.protectedPaths) : sandbox;
    },
    (sandbox) => sandbox.dispose(),
  );
}

async function sandboxEgress(context: Partial<Pick<ToolContext, 'network' | 'trace'>>, settings: SandboxSettings): Promise<SandboxEgress | undefined> {
  const egress = context.network?.egress;
  // A sandbox without network stays without it: the user's network.only holds, it grants nothing.
  if (!egress || (!settings.network && !settings.allowHosts)) return undefined;
  if (settings.kind === 'host') {
    context.trace?.emit('run-warning', {
      message: `commands run on the host, where nothing holds them to the allowed hosts (${egress.hosts.join(', ')}): they reach whatever the host reaches. Use the bwrap or docker sandbox to hold them to the list.`,
    });
    return undefined;
  }
  const proxy = await egress.proxy();
  return { httpSocket: proxy.httpSocket, socksSocket: proxy.socksSocket, watchCommand: (command) => egress.watchCommand(command) };
}
