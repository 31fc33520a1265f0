/**
 * The secrets of a run: the keys of every model profile its agents use (a flow's agents and called
 * agents may use profiles of their own), and every value the run hands to a sandbox or a server:
 * the variables named by `sandbox.pass_env` and those its MCP servers and A2A agents read, and the values an MCP
 * server's `env` writes out. A command can print what it is given, so each is hidden like a key.
 */
import type { RunPlan } from './recipe/resolve-recipe.js';
import { SecretRedactor } from '../services/secret-redaction.js';
import { mcpSecretValues, mcpSecretVariables } from './run-mcp-servers.js';
import { a2aEnvironmentVariables } from '../features/a2a/a2a-config.js';
import type { SandboxSettings } from '../contract/tool.js';

export function redactorForPlan(plan: RunPlan, environment: Record<string, string | undefined>): SecretRedactor {
  const agents = [...(plan.flow?.agents.values() ?? []), ...plan.callableAgents.values()];
  const used = [plan.profile, ...agents.map((agent) => agent.profile)];
  // A fallback's keys are as secret as its profile's, whether or not the run ever moves to it.
  const profiles = new Map(used.flatMap((profile) => [profile, ...(profile.fallbackProfiles ?? [])]).map((profile) => [profile.name, profile]));
  const a2aVariables = (plan.a2aAgents ?? []).flatMap(a2aEnvironmentVariables);
  return SecretRedactor.forProfiles(profiles.values(), environment, [...mcpSecretVariables(plan), ...a2aVariables, ...sandboxPassedVariables(plan)], mcpSecretValues(plan));
}

/** Every variable a sandbox of the run may be handed: the run's sandbox and any agent's. */
export function sandboxPassedVariables(plan: RunPlan): string[] {
  const settings: Array<SandboxSettings | undefined> = [
    plan.sandbox,
    plan.agent.sandbox,
    ...[...(plan.flow?.agents.values() ?? []), ...plan.callableAgents.values()].map((agent) => agent.config.sandbox),
    ...[...plan.agentsConfig.agents.values()].map((agent) => agent.sandbox),
  ];
  const names = new Set<string>();
  for (const setting of settings) {
    const passed = setting?.options.pass_env;
    if (Array.isArray(passed)) for (const name of passed) if (typeof name === 'string') names.add(name);
  }
  return [...names];
}
