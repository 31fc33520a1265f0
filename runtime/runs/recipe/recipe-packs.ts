/**
 * The packs a recipe runs with: the pack it belongs to, and the installed packs it names under
 * `packs:`. Their agents files are read like an agents.yaml beside the recipe (they may tighten
 * the package's agents, never loosen them), and their agents are also known as `name@pack`.
 */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { formatLocation, type Diagnostic, type SourceLocation } from '../../contract/errors.js';
import { didYouMean } from '../../contract/did-you-mean.js';
import { emptyAgentsConfig, loadAgentsFile } from './load-agents.js';
import type { AgentConfig, AgentsConfig, Recipe } from '../../config/types.js';
import { mergeMcpServers } from '../../features/mcp/server-config.js';
import { allSteps } from '../../config/flow-definition.js';
import { agentToolPrefix } from '../../features/flow/agent-tool-names.js';
import { findInstalledPack, installedPacks, packOfFile } from '../../features/packs/installed-packs.js';
import type { Pack } from '../../config/pack-manifest.js';
import { qualifiedName } from '../../kernel/plugin-loading/qualified-names.js';

/** The recipe's own pack first, then those it names, each once. */
export function packsOfRecipe(recipe: Recipe, cwd: string, diagnostics: Diagnostic[], own = packOfFile(recipe.file)): Pack[] {
  const packs = own ? [own] : [];
  for (const { name, location } of recipe.packs) {
    if (packs.some((pack) => pack.name === name)) continue;
    // A pack's recipe finds the packs it names where its own package would: from its folder too.
    const pack = findInstalledPack(name, cwd) ?? findInstalledPack(name, dirname(recipe.file));
    if (pack) {
      packs.push(pack);
      continue;
    }
    const installed = installedPacks(cwd).map((each) => each.name);
    diagnostics.push({
      severity: 'error',
      message: `packs: no pack '${name}' is installed here${didYouMean(name, installed)}; installed packs: ${installed.join(', ') || 'none'} (npm install ${name})`,
      location,
    });
  }
  return packs;
}

/**
 * Adds the packs' agents, profiles and MCP servers to `config`. An agent is known as `name@pack`,
 * and by its name when no other pack defines that name. The recipe's own pack (the first, when
 * `ownPack` is set) replaces an agent of the same name from the other agents files, as an
 * agents.yaml beside the recipe does; a pack the recipe only names under `packs:` does not, so
 * `agent: manus` keeps meaning the agent it meant before.
 */
export function addPackAgents(config: AgentsConfig, packs: readonly Pack[], diagnostics: Diagnostic[], ownPack?: Pack): void {
  const fromFiles = new Set(config.agents.keys());
  const definers = new Map<string, Array<{ pack: string; location?: AgentConfig['location'] }>>();
  for (const pack of packs) {
    if (!existsSync(pack.agentsFile)) continue;
    const own = emptyAgentsConfig();
    diagnostics.push(...loadAgentsFile(pack.agentsFile, own));
    config.files.push(...own.files);
    for (const [name, profile] of own.profiles) config.profiles.set(name, profile);
    for (const [name, agent] of own.agents) {
      const tagged: AgentConfig = { ...agent, pack: pack.name };
      config.agents.set(qualifiedName(name, pack.name), tagged);
      const defined = [...(definers.get(name) ?? []), { pack: pack.name, location: agent.location }];
      definers.set(name, defined);
      const replaces = pack === ownPack || !fromFiles.has(name);
      if (defined.length === 1 && replaces) config.agents.set(name, tagged);
    }
    config.mcpServers = mergeMcpServers(config.mcpServers, own.mcpServers);
  }
  config.ambiguousAgents = new Map([...definers].filter(([, defined]) => defined.length > 1));
}

/** Every place the recipe names an agent that two packs define, without saying which it means. */
export function ambiguousAgentUses(recipe: Recipe, config: AgentsConfig): Diagnostic[] {
  const ambiguous = config.ambiguousAgents ?? new Map();
  if (ambiguous.size === 0) return [];
  const uses: Array<{ name: string; location?: AgentConfig['location'] }> = [];
  const inline: AgentConfig[] = [];
  if (typeof recipe.agent === 'string') uses.push({ name: recipe.agent, location: recipe.agentLocation });
  else if (recipe.agent) inline.push(recipe.agent);
  for (const step of recipe.flow ? allSteps(recipe.flow.steps) : []) {
    if (typeof step.agent === 'string') uses.push({ name: step.agent, location: step.location });
    else if (step.agent) inline.push(step.agent);
  }
  for (const name of uses.map((use) => use.name)) {
    const agent = config.agents.get(name);
    if (agent) inline.push(agent);
  }
  for (const agent of inline) {
    for (const tool of agent.tools.filter((each) => each.startsWith(agentToolPrefix))) {
      uses.push({ name: tool.slice(agentToolPrefix.length), location: agent.toolLocations[tool] ?? agent.location });
    }
  }
  const diagnostics: Diagnostic[] = [];
  for (const use of uses) {
    const defined = ambiguous.get(use.name);
    if (!defined) continue;
    diagnostics.push({
      severity: 'error',
      message: `two packs define the agent '${use.name}': ${describeDefiners(defined)}; name the one you mean: ${defined.map((each: { pack: string }) => qualifiedName(use.name, each.pack)).join(' or ')}`,
      location: use.location,
    });
  }
  return diagnostics;
}

export function describeDefiners(defined: ReadonlyArray<{ pack: string; location?: SourceLocation }>): string {
  return defined.map(({ pack, location }) => `${pack} (${location ? formatLocation(location) : 'its agents file'})`).join(' and ');
}
