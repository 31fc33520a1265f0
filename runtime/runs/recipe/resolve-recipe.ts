/**
 * Everything a run needs that can be known without a model: agents files, the recipe, its agent,
 * plugins, parameters and the task text. All problems are collected and reported together, so a
 * bad recipe costs one round of fixes, not one per mistake.
 */
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { formatLocation, ConfigError, UsageError, type Diagnostic } from '../../contract/errors.js';
import { packageRoot } from '../../config/package-root.js';
import type { ContextProviderDefinition } from '../../contract/context-provider.js';
import { definitionLocation, displayPath, loadPluginFolders, type LoadedPlugins, type LoadedTool, type PluginFolder } from '../../kernel/plugin-loading/load-plugins.js';
import type { AnyToolDefinition } from '../../contract/tool.js';
import { didYouMean } from '../../contract/did-you-mean.js';
import { emptyAgentsConfig, loadAgentsFile, readModelProfile } from './load-agents.js';
import { loadRecipeFile } from './load-recipe.js';
import { a2aAgentEnvironmentRequest, mcpServerEnvironmentRequest, profileEndpointRequest, profileKeys, reviewRecipeTrust, trustRequestNote, type TrustRequest } from './recipe-requests.js';
import { knownModelOf, unpricedModelProblem } from '../../services/model/cost-budget-prices.js';
import { renderTemplate } from '../../config/template.js';
import { loadUserConfig } from './user-config.js';
import { environmentVariablesOf, mergeMcpServers, type McpServerConfig } from '../../features/mcp/server-config.js';
import { serverOfToolName, serversOfToolName } from '../../features/mcp/tool-names.js';
import type { permissionRuleDiagnostics } from '../../services/permissions/rule-diagnostics.js';
import { a2aEnvironmentVariables, mergeA2aAgents, type A2aAgentConfig } from '../../features/a2a/a2a-config.js';
import { a2aAgentTools } from '../../features/a2a/a2a-agent-tools.js';
import type { AgentConfig, AgentsConfig, ModelProfileConfig, ParameterValue, Recipe, RecipeParameter } from '../../config/types.js';
import { agentDefaults } from '../../config/defaults.js';
import { checkFlow } from '../../features/flow/check-flow.js';
import { flowAgentReferences, type FlowAgentReference } from '../../features/flow/flow-agents.js';
import { allSteps, flowDefaults, isKernelStepKind, type FlowDefinition } from '../../config/flow-definition.js';
import type { FlowAgent, FlowPlan } from '../../config/flow-plan.js';
import { agentToolPrefix } from '../../features/flow/agent-tool-names.js';
import type { Pack } from '../../config/pack-manifest.js';
import { addPackAgents, ambiguousAgentUses, describeDefiners, packsOfRecipe } from './recipe-packs.js';
import { packOfFile } from '../../features/packs/installed-packs.js';
import { qualifiedName, splitQualifiedName, unqualifiedName } from '../../kernel/plugin-loading/qualified-names.js';
import type { RecipeOverrides, RunPlan } from '../../config/run-plan.js';

export type { RecipeOverrides, RunBudgets, RunPlan } from '../../config/run-plan.js';

/** agents.yaml files in the order they apply: the package's, the current folder's, the recipe's. */
export function agentsFilesFor(recipeFile: string | undefined, cwd: string): string[] {
  return uniqueExisting(agentsFileCandidates(recipeFile, cwd));
}

/** Every agents.yaml a run reads, or would read once created. */
export function agentsFileCandidates(recipeFile: string | undefined, cwd: string): string[] {
  const candidates = [join(packageRoot, 'agents.yaml'), join(cwd, 'agents.yaml')];
  if (recipeFile) candidates.push(join(dirname(resolve(cwd, recipeFile)), 'agents.yaml'));
  return candidates;
}

/** Every plugin folder a run loads, or would load once created. */
export function pluginFolderCandidates(cwd: string, recipe?: Recipe): string[] {
  return [join(packageRoot, 'plugins'), join(cwd, 'plugins'), ...(recipe?.pluginFolders ?? []).map((folder) => folder.path)];
}

/**
 * The folders to load plugins from: the package's, the current folder's, and the recipe's. With
 * `needed` (the agent's tools and providers), only those built-in plugins load; every other plugin
 * file loads, so which tools exist never depends on what the agent lists.
 */
export function pluginFoldersFor(cwd: string, recipe?: Recipe, needed?: Iterable<string>, packs: readonly Pack[] = []): PluginFolder[] {
  const builtIn = realpathSync(join(packageRoot, 'plugins'));
  const neededBuiltIns = needed ? new Set(needed) : undefined;
  const folders = uniqueExisting([builtIn, join(cwd, 'plugins')]).map((path) => (path === builtIn ? { path, neededBuiltIns } : { path }));
  const packFolders = packs.filter((pack) => existsSync(pack.pluginsFolder)).map((pack) => ({ path: pack.pluginsFolder, pack: pack.name }));
  return [...folders, ...(recipe?.pluginFolders ?? []), ...packFolders];
}

function uniqueExisting(paths: string[]): string[] {
  const seen = new Set<string>();
  const result: string[] = [];
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const real = realpathSync(path);
    if (seen.has(real)) continue;
    seen.add(real);
    result.push(real);
  }
  return result;
}

/** The package's own agents.yaml: the only agents file trusted to loosen anything. */
export const packageAgentsFile = join(packageRoot, 'agents.yaml');

/** Loads agents files in order; those in `trustedFiles` (the package's by default) are the baseline. */
export function loadAgentsConfig(files: string[], trustedFiles: string[] = [packageAgentsFile]): { config: AgentsConfig; diagnostics: Diagnostic[] } {
  const trusted = new Set(uniqueExisting(trustedFiles));
  const config = emptyAgentsConfig();
  const diagnostics = files.flatMap((file) => loadAgentsFile(file, config, trusted.has(realpathSync(file))));
  return { config, diagnostics };
}

export interface ResolveOptions {
  cwd: string;
  overrides?: RecipeOverrides;
  /** Off for `manus validate`, which checks a recipe without the values a run would be given. */
  strictParameters?: boolean;
  checkSchemas?: boolean;
  /**
   * For `manus validate`: an attempt to remove a permission is an error, and each grant the recipe
   * asks for is a note. A run keeps the permission with a warning, and asks for the grants.
   */
  reportTrust?: boolean;
  /** Where the user's configuration is found (XDG_CONFIG_HOME, HOME) and which keys a run would send; default the process's. */
  environment?: Record<string, string | undefined>;
  /** For `manus inspect`: run no plugin code but the package's; other plugins' tools are known by the names their files declare. */
  importOnlyBuiltIns?: boolean;
}

/** Resolves a recipe into a run plan, or throws a ConfigError listing every problem. */
export async function resolveRecipe(recipeFile: string, options: ResolveOptions): Promise<RunPlan> {
  const overrides = options.overrides ?? {};
  const recipePath = resolve(options.cwd, recipeFile);
  const { recipe, diagnostics } = loadRecipeFile(recipePath);
  const agents = loadAgentsConfig(agentsFilesFor(recipePath, options.cwd));
  diagnostics.push(...agents.diagnostics);
  const userConfig = loadUserConfig(options.environment ?? process.env);
  diagnostics.push(...userConfig.diagnostics);
  if (!recipe) throw new ConfigError(diagnostics);
  const ownPack = packOfFile(recipe.file);
  const ownPackName = ownPack?.name;
  const packs = packsOfRecipe(recipe, options.cwd, diagnostics, ownPack);
  addPackAgents(agents.config, packs, diagnostics, ownPack);
  diagnostics.push(...ambiguousAgentUses(recipe, agents.config));

  const flow = recipe.flow;
  const agent = flow ? undefined : resolveAgent(recipe, agents.config, diagnostics);
  // A run loads only the built-in plugins its agents use; `manus validate` checks them all, and a
  // flow with a kind from a plugin loads them all, since the kind names its agents.
  const needed = options.checkSchemas || (flow && usesPluginKinds(flow))
    ? undefined
    : withCalledAgents(agent ? [agent] : flow ? flowAgentConfigs(flow, agents.config) : [], agents.config).flatMap((each) => [...each.tools, ...each.contextProviders]);
  const plugins = await loadPluginFolders(pluginFoldersFor(options.cwd, recipe, needed, packs), { checkSchemas: options.checkSchemas, importOnlyBuiltIns: options.importOnlyBuiltIns });
  diagnostics.push(...plugins.diagnostics);

  const strict = options.strictParameters !== false;
  const values = parameterValues(recipe, overrides.parameters ?? {}, strict, diagnostics);
  const task = flow ? resolveFlowTask(recipe, overrides, diagnostics) : resolveTask(recipe, overrides, values, strict, diagnostics);
  const workspace = overrides.workspace ?? (recipe.workspace && values ? renderTemplate(recipe.workspace, values) : recipe.workspace);
  const stepKinds = new Map([...plugins.stepKinds].map(([kind, loaded]) => [kind, loaded.stepKind]));
  if (flow) checkFlow({ flow, parameters: recipe.parameters, stepKinds, workspace: recipe.workspace }, diagnostics);
  const references: Map<unknown, FlowAgentReference> = flow
    ? flowAgentReferences(flow, agents.config, stepKinds, diagnostics)
    : new Map(agent ? [[recipe.agent, { config: agent, named: typeof recipe.agent === 'string' }]] : []);
  if (references.size === 0) throw new ConfigError(diagnostics);

  const mcpServers = mergeMcpServers(agents.config.mcpServers, userConfig.config.mcpServers, recipe.mcpServers, overrides.mcpServers ?? []);
  const a2aAgents = mergeA2aAgents(agents.config.a2aAgents, userConfig.config.a2aAgents, recipe.a2aAgents);
  const environment = options.environment ?? process.env;
  const trustInput = { agentsConfig: agents.config, cwd: options.cwd, parameterValues: values, workspaceFromCommandLine: overrides.workspace !== undefined, userParameters: new Set(Object.keys(overrides.parameters ?? {})), userPermissions: userConfig.config.permissions, userAllowHosts: userConfig.config.allowHosts };
  const ruleDiagnostics = options.reportTrust ? (await import('../../services/permissions/rule-diagnostics.js')).permissionRuleDiagnostics : undefined;
  const setups = new Map<unknown, AgentSetup>();
  for (const [key, reference] of references) {
    setups.set(key, setUpAgent(reference, { recipe, plugins, mcpServers, a2aAgents, environment, trustInput, agentsConfig: agents.config, model: overrides.model, reportTrust: options.reportTrust === true, ruleDiagnostics, ownPack: ownPackName }, diagnostics));
  }
  const callableAgents = new Map<string, AgentSetup>();
  const called = [...setups.values()].flatMap((setup) => setup.agentTools.map((name) => ({ name, caller: setup.agent })));
  while (called.length > 0) {
    const { name, caller } = called.shift()!;
    if (callableAgents.has(name)) continue;
    const config = agents.config.agents.get(name);
    if (!config) {
      diagnostics.push({
        severity: 'error',
        message: `agent '${caller.name}' lists agent:${name}, but there is no agent named '${name}'${didYouMean(name, agents.config.agents.keys())}`,
        location: caller.toolLocations[`${agentToolPrefix}${name}`] ?? caller.location,
      });
      continue;
    }
    const setup = setUpAgent({ config, named: true }, { recipe, plugins, mcpServers, a2aAgents, environment, trustInput, agentsConfig: agents.config, model: overrides.model, reportTrust: options.reportTrust === true, ruleDiagnostics, ownPack: ownPackName }, diagnostics);
    callableAgents.set(name, setup);
    called.push(...setup.agentTools.map((next) => ({ name: next, caller: setup.agent })));
  }
  diagnostics.push(...agentCallLoops([...setups.values(), ...callableAgents.values()], agents.config));
  const first = [...setups.values()][0];
  const trustRequests = uniqueTrustRequests([...setups.values(), ...callableAgents.values()].flatMap((setup) => setup.trustRequests));
  const { profile, modelOverride } = first;
  const runAgent: AgentConfig = flow ? flowAgent(recipe, [...setups.values()]) : first.agent;
  const allSetups = [...setups.values(), ...callableAgents.values()];
  const tools = new Map(allSetups.flatMap((setup) => [...setup.tools]));
  const calledTools = new Map(allSetups.flatMap((setup) => [...setup.calledTools]));
  const mcpToolNames = [...new Set(allSetups.flatMap((setup) => setup.mcpToolNames))];
  // A run asks only when a key would really be sent; validate names every key the profile reads.
  // Every profile a request may go to: the steps', the planners', those of agents called as tools, and their fallbacks.
  for (const each of reachableProfiles(allSetups)) {
    const keysSent = profileKeys(each)
      .filter((variable) => options.reportTrust || Boolean(environment[variable]));
    const endpoint = profileEndpointRequest(each, keysSent);
    if (endpoint) {
      trustRequests.push(endpoint);
      if (options.reportTrust) diagnostics.push(trustRequestNote(endpoint));
    }
  }
  for (const server of mcpServers) {
    const variablesSent = [...new Set(environmentVariablesOf(server))].filter((variable) => options.reportTrust || Boolean(environment[variable]));
    const request = mcpServerEnvironmentRequest(server, variablesSent);
    if (request) {
      trustRequests.push(request);
      if (options.reportTrust) diagnostics.push(trustRequestNote(request));
    }
  }
  const usedA2aAgents = [...new Set(allSetups.flatMap((setup) => setup.a2aAgents))];
  for (const agent of usedA2aAgents) {
    const variables = a2aEnvironmentVariables(agent);
    const missing = variables.filter((variable) => environment[variable] === undefined);
    // validate checks a recipe without the values a run would be given.
    if (!options.reportTrust && missing.length > 0) {
      diagnostics.push({ severity: 'error', message: `the A2A agent '${agent.name}' needs environment variables that are not set: ${missing.join(', ')}`, location: agent.location });
    }
    const request = a2aAgentEnvironmentRequest(agent, variables.filter((variable) => options.reportTrust || Boolean(environment[variable])));
    if (request) {
      trustRequests.push(request);
      if (options.reportTrust) diagnostics.push(trustRequestNote(request));
    }
  }
  if ((overrides.maxCost ?? recipe.budgets.cost) !== undefined) {
    const checked = new Set<string>();
    const priced = allSetups.flatMap(({ profile, modelOverride }) => [
      { profile, modelOverride, fallback: false },
      ...(profile.fallbackProfiles ?? []).map((fallback) => ({ profile: fallback, modelOverride: undefined, fallback: true })),
    ]);
    for (const { profile, modelOverride, fallback } of priced) {
      const model = knownModelOf(profile, modelOverride, environment);
      const key = `${profile.name}\u0000${model?.model ?? ''}`;
      if (checked.has(key)) continue;
      checked.add(key);
      // A model known only once the run connects (Ollama's first model) is checked then, before its first
      // request; a fallback connects only when it is needed, too late for that, so its model must be known now.
      if (!model && !profile.price && !fallback) continue;
      const problem = await unpricedModelProblem(profile, model);
      if (problem) diagnostics.push({ severity: 'error', message: problem, location: profile.location ?? { file: recipe.file } });
    }
  }
  if (diagnostics.some((diagnostic) => diagnostic.severity === 'error')) throw new ConfigError(diagnostics);

  const flowPlan: FlowPlan | undefined = flow && values
    ? { definition: flow, stepKinds, parameters: values, agents: new Map([...setups].map(([key, setup]) => [key, flowAgentOf(setup)])) }
    : undefined;
  return {
    recipe,
    overrides,
    agent: runAgent,
    profile,
    modelOverride,
    task: task ?? '',
    workspace,
    tools,
    calledTools,
    contextProviders: first.contextProviders,
    budgets: {
      steps: overrides.maxSteps ?? recipe.budgets.steps ?? (flow ? flowDefaults.steps : first.agent.maxSteps),
      tokens: overrides.maxTokens ?? recipe.budgets.tokens,
      timeSeconds: overrides.maxTimeSeconds ?? recipe.budgets.timeSeconds,
      cost: overrides.maxCost ?? recipe.budgets.cost,
    },
    sandbox: recipe.sandbox ?? first.agent.sandbox,
    toolSettings: first.toolSettings,
    warnings: diagnostics,
    agentsConfig: agents.config,
    trustGrants: new Set([...(overrides.trust ?? []), ...userConfig.config.trust]),
    trustRequests,
    mcpServers,
    a2aAgents: usedA2aAgents,
    mcpToolNames,
    networkAccess: userConfig.config.network,
    flow: flowPlan,
    callableAgents: new Map([...callableAgents].map(([name, setup]) => [name, flowAgentOf(setup)])),
    packs,
  };
}

interface AgentSetup {
  agent: AgentConfig;
  tools: Map<string, AnyToolDefinition>;
  /** The tools its tools call (`calls`), not offered to the model unless it lists them too. */
  calledTools: Map<string, AnyToolDefinition>;
  /** Agents it calls as tools, by name. */
  agentTools: string[];
  mcpToolNames: string[];
  /** The remote A2A agents it calls. */
  a2aAgents: A2aAgentConfig[];
  contextProviders: ContextProviderDefinition[];
  toolSettings: Record<string, Record<string, unknown>>;
  profile: ModelProfileConfig;
  modelOverride?: string;
  trustRequests: TrustRequest[];
}

interface AgentSetupInput {
  recipe: Recipe;
  plugins: LoadedPlugins;
  mcpServers: McpServerConfig[];
  a2aAgents: A2aAgentConfig[];
  environment: Record<string, string | undefined>;
  trustInput: Omit<Parameters<typeof reviewRecipeTrust>[0], 'recipe' | 'agent' | 'tools'>;
  agentsConfig: AgentsConfig;
  model?: string;
  reportTrust: boolean;
  /** Checks the permission rules, for `manus validate`; loaded only then, since it brings the shell parser's rules. */
  ruleDiagnostics?: typeof permissionRuleDiagnostics;
  /** The pack the recipe belongs to: its inline agents mean that pack's tools first. */
  ownPack?: string;
}

/**
 * A tool name two sources could give: two MCP servers (`corp_vault` + `read` and `corp` +
 * `vault_read` are both `mcp_corp_vault_read`), or a plugin or pack tool and an MCP server. Each is
 * an error naming both sources and where they were declared, rather than one silently winning.
 */
function toolNameCollisions(config: AgentConfig, input: AgentSetupInput): Diagnostic[] {
  const serverNames = input.mcpServers.map((server) => server.name);
  const declared = (name: string) => {
    const server = input.mcpServers.find((each) => each.name === name)!;
    return `the MCP server '${name}' (declared in ${formatLocation(server.location ?? { file: server.declaredIn })})`;
  };
  const diagnostics: Diagnostic[] = [];
  for (const name of config.tools) {
    const sources = serversOfToolName(name, serverNames).map(declared);
    const plugin = input.plugins.tools.get(name);
    if (plugin && sources.length > 0) sources.unshift(`the plugin tool in ${plugin.file}`);
    if (sources.length < 2) continue;
    diagnostics.push({
      severity: 'error',
      message: `agent '${config.name}' lists the tool '${name}', which more than one source would give: ${sources.join(' and ')}; rename a server or list its tools by names only one of them gives`,
      location: config.toolLocations[name] ?? config.location,
    });
  }
  return diagnostics;
}

/** One agent's tools, context providers, permissions and model profile, with the problems found. */
function setUpAgent(reference: FlowAgentReference, input: AgentSetupInput, diagnostics: Diagnostic[]): AgentSetup {
  const { config } = reference;
  const serverNames = input.mcpServers.map((server) => server.name);
  const mcpToolNames = config.tools.filter((name) => !input.plugins.tools.has(name) && serverOfToolName(name, serverNames) !== undefined);
  diagnostics.push(...toolNameCollisions(config, input));
  const agentTools = config.tools.filter((name) => name.startsWith(agentToolPrefix)).map((name) => name.slice(agentToolPrefix.length));
  const remote = a2aAgentTools(config, input.a2aAgents, input.plugins.tools, input.environment, diagnostics);
  const tools = selectTools(config, input.plugins, diagnostics, new Set([...mcpToolNames, ...agentTools.map((name) => `${agentToolPrefix}${name}`), ...remote.names]), input.mcpServers, config.pack ?? input.ownPack);
  for (const [name, tool] of remote.tools) tools.set(name, tool);
  const calledTools = calledToolsOf(config, tools, input.plugins, diagnostics);
  const contextProviders = selectContextProviders(config, input.plugins, diagnostics);
  // Reviewed as the recipe's agent: by name, it is measured against the trusted agent of that name.
  // A tool it calls takes its settings as a listed tool does, so their grants are asked for too.
  const trust = reviewRecipeTrust({ ...input.trustInput, recipe: { ...input.recipe, agent: reference.named ? config.name : config }, agent: config, tools: new Map([...calledTools, ...tools]) });
  if (input.reportTrust) {
    diagnostics.push(...trust.removals);
    diagnostics.push(...trust.requests.map(trustRequestNote));
    const allTools = new Map([...input.plugins.tools].map(([name, loaded]) => [unqualifiedName(name), loaded.tool]));
    const knownByName = (name: string) => name.startsWith('agent_') || name.startsWith('a2a_') || serverOfToolName(name, serverNames) !== undefined;
    for (const block of trust.permissions.blocks) {
      diagnostics.push(...(input.ruleDiagnostics?.({ settings: block.settings, source: block.source, tools: allTools, knownByName }) ?? []));
    }
  } else {
    diagnostics.push(...trust.removals.map((removal): Diagnostic => ({ ...removal, severity: 'warning' })));
  }
  const { profile, modelOverride } = resolveProfile(config, input.agentsConfig, input.model, diagnostics);
  return {
    // The model and the permissions know a tool by its own name; `name@pack` only chose which one.
    agent: { ...config, tools: config.tools.map(unqualifiedName), permissionPolicy: trust.permissions },
    tools,
    calledTools,
    agentTools,
    mcpToolNames,
    a2aAgents: remote.agents,
    contextProviders,
    toolSettings: mergeToolSettings(config.toolSettings, input.recipe.toolSettings),
    profile,
    modelOverride,
    trustRequests: trust.requests,
  };
}

function flowAgentOf(setup: AgentSetup): FlowAgent {
  return {
    config: setup.agent,
    tools: [...setup.tools.keys()],
    mcpToolNames: setup.mcpToolNames,
    agentTools: setup.agentTools,
    contextProviders: setup.contextProviders,
    toolSettings: setup.toolSettings,
    profile: setup.profile,
    modelOverride: setup.modelOverride,
  };
}

/**
 * What a flow's run is recorded and started with: its agents' tools together (the MCP servers any
 * of them use start with the run), and the first agent's settings for the rest. Each step runs with
 * its own agent.
 */
function flowAgent(recipe: Recipe, setups: AgentSetup[]): AgentConfig {
  const first = setups[0].agent;
  return {
    ...first,
    name: `${recipe.name} (flow)`,
    description: recipe.description,
    tools: [...new Set(setups.flatMap((setup) => setup.agent.tools))],
    toolLocations: Object.assign({}, ...setups.map((setup) => setup.agent.toolLocations)),
    contextProviders: [],
  };
}

/** The agents and every agent they call as tools, as far as agents.yaml declares them. */
function withCalledAgents(roots: AgentConfig[], agents: AgentsConfig): AgentConfig[] {
  const found = new Map(roots.map((root) => [root, root]));
  const queue = [...roots];
  while (queue.length > 0) {
    for (const name of calledAgents(queue.shift()!)) {
      const called = agents.agents.get(name);
      if (!called || found.has(called)) continue;
      found.set(called, called);
      queue.push(called);
    }
  }
  return [...found.values()];
}

function calledAgents(agent: AgentConfig): string[] {
  return agent.tools.filter((name) => name.startsWith(agentToolPrefix)).map((name) => name.slice(agentToolPrefix.length));
}

/** An agent that would call itself, directly or through others, is refused: the calls would never end. */
function agentCallLoops(setups: AgentSetup[], agents: AgentsConfig): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const reported = new Set<string>();
  for (const { agent } of setups) {
    const path = findLoop(agent.name, calledAgents(agent), agents, [agent.name]);
    if (!path) continue;
    const key = [...path].sort().join(' ');
    if (reported.has(key)) continue;
    reported.add(key);
    diagnostics.push({
      severity: 'error',
      message: `agent '${agent.name}' would call itself: ${path.join(' -> agent:')}; an agent may not call itself, directly or through others`,
      location: agent.toolLocations[`${agentToolPrefix}${path[1]}`] ?? agent.location,
    });
  }
  return diagnostics;
}

function findLoop(start: string, next: string[], agents: AgentsConfig, path: string[]): string[] | undefined {
  for (const name of next) {
    if (name === start) return [...path, name];
    if (path.includes(name)) continue;
    const called = agents.agents.get(name);
    const found = called ? findLoop(start, calledAgents(called), agents, [...path, name]) : undefined;
    if (found) return found;
  }
  return undefined;
}

function usesPluginKinds(flow: FlowDefinition): boolean {
  return allSteps(flow.steps).some((step) => !isKernelStepKind(step.kind));
}

/** The agents of a flow's agent steps, as far as they can be found, to know which plugins to load. */
function flowAgentConfigs(flow: FlowDefinition, agents: AgentsConfig): AgentConfig[] {
  return [...flowAgentReferences(flow, agents, new Map(), []).values()].map((reference) => reference.config);
}

/** A flow's steps have their own prompts: there is no task to give it with --prompt. */
function resolveFlowTask(recipe: Recipe, overrides: RecipeOverrides, diagnostics: Diagnostic[]): string {
  if (overrides.prompt !== undefined) {
    diagnostics.push({ severity: 'error', message: `--prompt gives the task of a recipe with one agent; the flow ${recipe.name} takes its inputs as --param`, location: { file: recipe.file } });
  }
  return '';
}

function uniqueProfiles(profiles: ModelProfileConfig[]): ModelProfileConfig[] {
  return [...new Map(profiles.map((profile) => [profile.name, profile])).values()];
}

function uniqueTrustRequests(requests: TrustRequest[]): TrustRequest[] {
  return [...new Map(requests.map((request) => [`${request.grant}\u0000${request.setting}\u0000${request.detail ?? ''}`, request])).values()];
}

function resolveAgent(recipe: Recipe, agents: AgentsConfig, diagnostics: Diagnostic[]): AgentConfig | undefined {
  if (typeof recipe.agent !== 'string') return recipe.agent;
  const agent = agents.agents.get(recipe.agent);
  if (!agent) {
    const known = [...agents.agents.keys()];
    diagnostics.push({
      severity: 'error',
      message: `no agent named '${recipe.agent}'${didYouMean(recipe.agent, known)}; declared agents: ${known.join(', ') || 'none'} (in ${agents.files.map(displayPath).join(', ') || 'no agents.yaml'})`,
      location: recipe.agentLocation,
    });
  }
  return agent;
}

/**
 * The tools the agent's tools call (`calls`), and those they call in turn, by name; a pack's tool
 * means its own pack's tool first. A name no plugin defines is an error at the calling tool.
 */
function calledToolsOf(agent: AgentConfig, tools: ReadonlyMap<string, AnyToolDefinition>, plugins: LoadedPlugins, diagnostics: Diagnostic[]): Map<string, AnyToolDefinition> {
  const called = new Map<string, AnyToolDefinition>();
  const queue = [...tools.values()];
  while (queue.length > 0) {
    const caller = queue.shift()!;
    const pack = [...plugins.tools.values()].find((loaded) => loaded.tool === caller)?.pack;
    for (const name of caller.calls ?? []) {
      if (called.has(name)) continue;
      const loaded = (pack === undefined ? undefined : plugins.tools.get(qualifiedName(name, pack))) ?? plugins.tools.get(name);
      if (!loaded) {
        diagnostics.push({
          severity: 'error',
          message: `agent '${agent.name}' lists the tool '${caller.name}', which calls the tool '${name}', but no plugin of the run defines it${didYouMean(name, plugins.tools.keys())}`,
          location: agent.toolLocations[caller.name] ?? agent.location,
        });
        continue;
      }
      called.set(name, loaded.tool);
      queue.push(loaded.tool);
    }
  }
  return called;
}

/** A tool the agent lists that no plugin in the run's folders defines is an error, typo or not. */
function selectTools(
  agent: AgentConfig,
  plugins: LoadedPlugins,
  diagnostics: Diagnostic[],
  mcpToolNames: ReadonlySet<string>,
  mcpServers: readonly McpServerConfig[],
  pack: string | undefined,
): Map<string, AnyToolDefinition> {
  const tools = new Map<string, AnyToolDefinition>();
  // A pack's agents mean their own pack's tools by a plain name.
  const inPack = (name: string) => plugins.tools.has(`${name}@${pack}`) || plugins.declaredNames?.has(`${name}@${pack}`) === true;
  const own = (name: string) => (pack !== undefined && splitQualifiedName(name).pack === undefined && inPack(name) ? `${name}@${pack}` : name);
  for (const name of agent.tools.map(own)) {
    // An MCP server's tools are known once it starts; the names are checked then.
    if (mcpToolNames.has(name)) continue;
    // Read from its file and not run (manus inspect): there is no definition to take.
    const declared = plugins.tools.has(name) ? undefined : plugins.declaredNames?.get(name);
    if (declared) {
      const packs = [...new Set(declared.flatMap((place) => (place.pack === undefined ? [] : [place.pack])))];
      if (packs.length > 1) diagnostics.push(ambiguousTool(agent, name, declared.map((place) => ({ file: place.file, pack: place.pack }))));
      continue;
    }
    const ambiguous = plugins.ambiguousTools?.get(name);
    if (ambiguous) {
      diagnostics.push(ambiguousTool(agent, name, ambiguous));
      continue;
    }
    const loaded = plugins.tools.get(name);
    const own = unqualifiedName(name);
    const chosen = tools.get(own);
    if (loaded && chosen && chosen !== loaded.tool) {
      diagnostics.push({ severity: 'error', message: `agent '${agent.name}' lists two tools named '${own}'; the model can be offered only one of them`, location: agent.toolLocations[name] ?? agent.location });
    } else if (loaded) tools.set(own, loaded.tool);
    else if (name.startsWith('mcp_')) diagnostics.push(mcpServerNotDeclared(agent, name, mcpServers));
    else if (splitQualifiedName(name).pack !== undefined) diagnostics.push(toolNotInPack(agent, name, plugins));
    else diagnostics.push(toolNotAvailable(agent, name, [...plugins.tools.keys(), ...(plugins.unloadedNames ?? [])]));
  }
  return tools;
}

/** Two packs define the tool: the agent must say which one it means. */
function ambiguousTool(agent: AgentConfig, name: string, defined: ReadonlyArray<Pick<LoadedTool, 'file' | 'pack'>>): Diagnostic {
  const definers = describeDefiners(defined.map((each) => ({ pack: each.pack ?? 'the run', location: definitionLocation(each.file, name) })));
  return {
    severity: 'error',
    message: `agent '${agent.name}' lists the tool '${name}', which two packs define: ${definers}; name the one you mean: ${defined.map((each) => `${name}@${each.pack}`).join(' or ')}`,
    location: agent.toolLocations[name] ?? agent.location,
  };
}

function toolNotInPack(agent: AgentConfig, qualified: string, plugins: LoadedPlugins): Diagnostic {
  const { name, pack } = splitQualifiedName(qualified);
  const packTools = [...plugins.tools.values()].filter((loaded) => loaded.pack === pack).map((loaded) => loaded.tool.name);
  const packs = [...new Set([...plugins.tools.values()].flatMap((loaded) => (loaded.pack === undefined ? [] : [loaded.pack])))];
  const problem = packs.includes(pack!)
    ? `the pack ${pack} defines no tool '${name}'${didYouMean(name, packTools)}; its tools: ${[...new Set(packTools)].join(', ') || 'none'}`
    : `no pack '${pack}' is part of this run${didYouMean(pack!, packs)}; the run's packs with tools: ${packs.join(', ') || 'none'} (a recipe adds an installed pack with packs: [${pack}])`;
  return { severity: 'error', message: `agent '${agent.name}' lists the tool '${qualified}', but ${problem}`, location: agent.toolLocations[qualified] ?? agent.location };
}

function mcpServerNotDeclared(agent: AgentConfig, tool: string, servers: readonly McpServerConfig[]): Diagnostic {
  const declared = servers.map((server) => server.name);
  return {
    severity: 'error',
    message: `agent '${agent.name}' lists the tool '${tool}', but no MCP server it could belong to is declared (mcp_<server>_<tool>); declared MCP servers: ${declared.join(', ') || 'none'}`,
    location: agent.toolLocations[tool] ?? agent.location,
  };
}

/** The code of a tool an agent lists that no plugin defines: an error in a run, a warning for an agents file alone. */
export const unknownToolCode = 'unknown_tool';

/** The error for a tool an agent lists but no plugin of the run defines. */
export function toolNotAvailable(agent: AgentConfig, tool: string, available: Iterable<string>): Diagnostic {
  return {
    severity: 'error',
    message: `agent '${agent.name}' lists the tool '${tool}', which no plugin defines${didYouMean(tool, available)}`,
    location: agent.toolLocations[tool] ?? agent.location,
    code: unknownToolCode,
  };
}

function selectContextProviders(agent: AgentConfig, plugins: LoadedPlugins, diagnostics: Diagnostic[]): ContextProviderDefinition[] {
  const providers: ContextProviderDefinition[] = [];
  for (const name of agent.contextProviders) {
    const loaded = plugins.contextProviders.get(name);
    if (loaded) providers.push(loaded.provider);
    else diagnostics.push({
      severity: 'error',
      message: `agent '${agent.name}' names the context provider '${name}', which no plugin defines${didYouMean(name, plugins.contextProviders.keys())}`,
      location: agent.location,
    });
  }
  return providers;
}

/** The profile of an agent whose `llm:` names none that is declared: every setting at its default. */
const fallbackProfile = readModelProfile(agentDefaults.llm);

function resolveProfile(
  agent: AgentConfig,
  agents: AgentsConfig,
  model: string | undefined,
  diagnostics: Diagnostic[],
): { profile: ModelProfileConfig; modelOverride?: string } {
  if (model && agents.profiles.has(model)) return { profile: withFallbacks(agents.profiles.get(model)!, agents, diagnostics) };
  const profile = agents.profiles.get(agent.llm);
  if (profile) return { profile: withFallbacks(profile, agents, diagnostics), modelOverride: model };
  if (agent.llm !== agentDefaults.llm) {
    diagnostics.push({
      severity: 'error',
      message: `agent '${agent.name}' uses the model profile '${agent.llm}', which is not declared under llm:${didYouMean(agent.llm, agents.profiles.keys())}`,
      location: agent.location,
    });
  }
  return { profile: fallbackProfile, modelOverride: model };
}

/** The profile with the profiles its `fallback:` names, each a declared profile other than itself. */
function withFallbacks(profile: ModelProfileConfig, agents: AgentsConfig, diagnostics: Diagnostic[]): ModelProfileConfig {
  if (profile.fallback.length === 0) return profile;
  const fallbackProfiles: ModelProfileConfig[] = [];
  for (const name of profile.fallback) {
    const fallback = agents.profiles.get(name);
    if (fallback && name !== profile.name) {
      fallbackProfiles.push(fallback);
      continue;
    }
    diagnostics.push({
      severity: 'error',
      message: fallback
        ? `the model profile '${profile.name}' names itself as its fallback`
        : `the model profile '${profile.name}' falls back to '${name}', which is not declared under llm:${didYouMean(name, agents.profiles.keys())}`,
      location: profile.location,
    });
  }
  return { ...profile, fallbackProfiles };
}

/** Every profile a setup may send requests to: its own and its fallbacks. */
function reachableProfiles(setups: Iterable<AgentSetup>): ModelProfileConfig[] {
  return uniqueProfiles([...setups].flatMap((setup) => [setup.profile, ...(setup.profile.fallbackProfiles ?? [])]));
}

function resolveTask(
  recipe: Recipe,
  overrides: RecipeOverrides,
  values: Record<string, ParameterValue> | undefined,
  strict: boolean,
  diagnostics: Diagnostic[],
): string | undefined {
  if (overrides.prompt !== undefined) return overrides.prompt;
  if (recipe.promptTemplate === undefined) {
    if (strict) diagnostics.push({ severity: 'error', message: `the recipe has no prompt; give the task with --prompt`, location: { file: recipe.file } });
    return undefined;
  }
  return values ? renderTemplate(recipe.promptTemplate, values) : undefined;
}

function parameterValues(
  recipe: Recipe,
  given: Record<string, string>,
  strict: boolean,
  diagnostics: Diagnostic[],
): Record<string, ParameterValue> | undefined {
  const values: Record<string, ParameterValue> = {};
  const byName = new Map(recipe.parameters.map((parameter) => [parameter.name, parameter]));
  for (const name of Object.keys(given)) {
    if (!byName.has(name)) {
      diagnostics.push({ severity: 'error', message: `--param ${name}: the recipe has no parameter '${name}'${didYouMean(name, byName.keys())}`, location: { file: recipe.file } });
    }
  }
  for (const parameter of recipe.parameters) {
    const raw = given[parameter.name];
    if (raw === undefined) {
      if (parameter.default !== undefined) values[parameter.name] = parameter.default;
      // An optional parameter without a default is already a recipe error; do not call it required too.
      else if (strict && parameter.required) diagnostics.push({ severity: 'error', message: `parameter '${parameter.name}' is required: pass --param ${parameter.name}=VALUE`, location: parameter.location });
      continue;
    }
    const converted = convertParameter(parameter, raw);
    if (typeof converted === 'object' && !Array.isArray(converted)) diagnostics.push({ severity: 'error', message: `--param ${parameter.name}: ${converted.problem}`, location: parameter.location });
    else values[parameter.name] = converted;
  }
  return diagnostics.some((diagnostic) => diagnostic.severity === 'error') ? undefined : values;
}

function convertParameter(parameter: RecipeParameter, raw: string): ParameterValue | { problem: string } {
  switch (parameter.type) {
    case 'string':
      return raw;
    case 'number': {
      const value = Number(raw);
      return raw.trim() !== '' && Number.isFinite(value) ? value : { problem: `'${raw}' is not a number` };
    }
    case 'boolean':
      if (/^(true|yes|1)$/i.test(raw)) return true;
      if (/^(false|no|0)$/i.test(raw)) return false;
      return { problem: `'${raw}' is not true or false` };
    case 'enum':
      return parameter.values?.includes(raw) ? raw : { problem: `'${raw}' is not one of: ${parameter.values?.join(', ')}` };
    case 'list':
      return listParameter(raw);
  }
}

/** `a,b,c`, or a JSON array of strings when items hold commas. */
function listParameter(raw: string): string[] | { problem: string } {
  if (!raw.trimStart().startsWith('[')) return raw.split(',').map((item) => item.trim()).filter((item) => item !== '');
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (Array.isArray(parsed) && parsed.every((item) => ['string', 'number', 'boolean'].includes(typeof item))) return parsed.map(String);
  } catch {
    // Reported below, with what a list looks like.
  }
  return { problem: `'${raw}' is not a list: give items separated by commas, or a JSON array of strings` };
}

function mergeToolSettings(
  agentSettings: Record<string, Record<string, unknown>>,
  recipeSettings: Record<string, Record<string, unknown>>,
): Record<string, Record<string, unknown>> {
  const merged: Record<string, Record<string, unknown>> = { ...agentSettings };
  for (const [tool, settings] of Object.entries(recipeSettings)) merged[tool] = { ...merged[tool], ...settings };
  return merged;
}

export function parseParameterArguments(pairs: string[]): Record<string, string> {
  const values: Record<string, string> = {};
  for (const pair of pairs) {
    const separator = pair.indexOf('=');
    if (separator <= 0) throw new UsageError(`--param expects key=value, got '${pair}'`);
    values[pair.slice(0, separator)] = pair.slice(separator + 1);
  }
  return values;
}
