/**
 * The secrets of a run: the keys of every model profile its agents use (a flow's agents and called
 * agents may use profiles of their own) and the user's variables its MCP servers read.
 */
import type { RunPlan } from './recipe/resolve-recipe.js';
import { mcpSecretVariables } from './run-mcp-servers.js';
import { SecretRedactor } from '../services/secret-redaction.js';

export function redactorForPlan(plan: RunPlan, environment: Record<string, string | undefined>): SecretRedactor {
  const agents = [...(plan.flow?.agents.values() ?? []), ...plan.callableAgents.values()];
  const profiles = new Map([plan.profile, ...agents.map((agent) => agent.profile)].map((profile) => [profile.name, profile]));
  return SecretRedactor.forProfiles(profiles.values(), environment, mcpSecretVariables(plan));
}
