/**
 * The run's entry to its MCP servers. Runs that need none never load the MCP SDK.
 */
import type { RunPlan } from '../config/resolve-recipe.js';
import type { RunServerServices } from './run-servers.js';
import { environmentVariablesOf } from './server-config.js';

export type McpRunServices = Omit<RunServerServices, 'agent' | 'trustGrants' | 'hostChosenByUser'>;

export function needsMcpServers(plan: RunPlan): boolean {
  return plan.mcpToolNames.length > 0 || plan.mcpServers.some((server) => server.origin === 'command-line');
}

export async function startMcpServers(plan: RunPlan, services: McpRunServices): Promise<void> {
  if (!needsMcpServers(plan)) return;
  const { startRunServers } = await import('./run-servers.js');
  await startRunServers(plan.mcpServers, plan.mcpToolNames, {
    ...services,
    agent: plan.agent,
    trustGrants: plan.trustGrants,
    hostChosenByUser: plan.overrides.sandbox === 'host',
  });
}

/** The user's variables the run's MCP servers read: hidden in every sink like a key. */
export function mcpSecretVariables(plan: RunPlan): string[] {
  return plan.mcpServers.flatMap(environmentVariablesOf);
}
