/**
 * The run's entry to its MCP servers. Runs that need none never load the MCP SDK.
 */
import type { RunPlan } from '../config/run-plan.js';
import type { ChatModel } from '../contract/model-types.js';
import type { PreparedRun, RunOptions } from './run-types.js';
import { createSandbox } from '../services/sandbox/create-sandbox.js';
import { sandboxForRun } from '../services/sandbox/run-sandbox.js';
import type { Toolbox } from '../kernel/toolbox.js';
import type { RunServerServices } from '../features/mcp/run-servers.js';
import { environmentVariablesOf } from '../features/mcp/server-config.js';
import { looksSecret } from '../services/secret-redaction.js';

export type McpRunServices = Omit<RunServerServices, 'agent' | 'trustGrants' | 'hostChosenByUser' | 'networkAccess'>;

export function needsMcpServers(plan: RunPlan): boolean {
  return plan.mcpToolNames.length > 0 || plan.mcpServers.some((server) => server.origin === 'command-line');
}

export async function startMcpServers(plan: RunPlan, services: McpRunServices): Promise<void> {
  if (!needsMcpServers(plan)) return;
  const { startRunServers } = await import('../features/mcp/run-servers.js');
  await startRunServers(plan.mcpServers, plan.mcpToolNames, {
    ...services,
    agent: plan.agent,
    trustGrants: plan.trustGrants,
    hostChosenByUser: plan.overrides.sandbox === 'host',
    networkAccess: plan.networkAccess,
  });
}

/** The user's variables the run's MCP servers read: hidden in every sink like a key. */
export function mcpSecretVariables(plan: RunPlan): string[] {
  return plan.mcpServers.flatMap(environmentVariablesOf);
}

/**
 * The values MCP servers' `env` writes out that are secrets by their variable's name or as a URL
 * with a password: the server gets them, and may show them in its replies. Plain settings
 * (`NODE_ENV: production`) stay visible, or every "production" in the run would be hidden.
 */
export function mcpSecretValues(plan: RunPlan): string[] {
  return plan.mcpServers.flatMap((server) =>
    server.transport.kind === 'stdio'
      ? Object.entries(server.transport.env).flatMap(([name, value]) => (typeof value === 'string' && looksSecret(name, value) ? [value] : []))
      : [],
  );
}

/** What the run's servers use of the run: its toolbox, resources, trace, model, human channel and sandboxes. */
export function mcpServicesFor(run: PreparedRun, options: RunOptions, model: ChatModel, toolbox: Toolbox): McpRunServices {
  return {
    toolbox,
    resources: run.resources,
    trace: run.trace,
    model,
    human: run.human,
    signal: options.signal,
    usage: run.outsideUsage,
    environment: options.environment,
    workspace: run.workspace,
    runSandbox: () => sandboxForRun(run),
    // The user's own servers run on the host, contained and recorded in the run folder like any host command.
    hostSandbox: () => run.resources.get('mcp-host-sandbox', () => createSandbox({
      kind: 'host', network: true, options: {}, workspace: run.workspace, runDirectory: run.runDirectory, runId: run.runId,
    }), (sandbox) => sandbox.dispose()),
    failRun: (error) => run.faults.failRun(error),
    ...(run.network.egress ? { egressFetch: run.network.fetch } : {}),
    ...(run.network.userFetch ? { userFetch: run.network.userFetch } : {}),
  };
}
