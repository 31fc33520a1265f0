/**
 * The secrets of a run: the keys of every model profile its agents use (a flow's agents and called
 * agents may use profiles of their own) and the user's variables its MCP servers read.
 */
import type { RunPlan } from './config/resolve-recipe.js';
import { mcpSecretVariables } from './mcp/run-mcp-servers.js';
import { SecretRedactor } from './secret-redaction.js';

export function redactorForPlan(plan: RunPlan, environment: Record<string, string | undefined>): SecretRedactor {
  const agents = [...(plan.flow?.agents.values() ?? []), ...plan.callableAgents.values()];
  const used = [plan.profile, ...agents.map((agent) => agent.profile)];
  // A fallback's keys are as secret as its profile's, whether or not the run ever moves to it.
  const profiles = new Map(used.flatMap((profile) => [profile, ...(profile.fallbackProfiles ?? [])]).map((profile) => [profile.name, profile]));
  return SecretRedactor.forProfiles(profiles.values(), environment, mcpSecretVariables(plan));
}
