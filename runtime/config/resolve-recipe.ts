/**
 * Everything a run needs that can be known without a model: agents files, the recipe, its agent,
 * plugins, parameters and the task text. All problems are collected and reported together, so a
 * bad recipe costs one round of fixes, not one per mistake.
 */
import { existsSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError, UsageError, type Diagnostic } from '../errors.js';
import { packageRoot } from '../package-root.js';
import type { ContextProviderDefinition } from '../context-provider.js';
import { displayPath, loadPluginFolders, type LoadedPlugins, type PluginFolder } from '../plugin-loading/load-plugins.js';
import type { AnyToolDefinition, SandboxSettings } from '../tool.js';
import { agentDefaults } from './defaults.js';
import { didYouMean } from './did-you-mean.js';
import { emptyAgentsConfig, loadAgentsFile, readModelProfile } from './load-agents.js';
import { loadRecipeFile } from './load-recipe.js';
import { profileEndpointRequest, reviewRecipeTrust, trustRequestNote, type TrustRequest } from './recipe-requests.js';
import { defaultApiKeyEnv } from '../model/model-connection.js';
import { renderTemplate } from './template.js';
import type { TrustGrant } from './trust-grants.js';
import { loadUserConfig } from './user-config.js';
import { mergeMcpServers, type McpServerConfig } from '../mcp/server-config.js';
import { serverOfToolName } from '../mcp/tool-names.js';
import type { AgentConfig, AgentsConfig, ModelProfileConfig, ParameterValue, Recipe, RecipeParameter } from './types.js';

export interface RecipeOverrides {
  prompt?: string;
  parameters?: Record<string, string>;
  /** A profile name from `llm:`, or a model id for the agent's profile. */
  model?: string;
  maxSteps?: number;
  maxTokens?: number;
  maxCost?: number;
  maxTimeSeconds?: number;
  workspace?: string;
  /** Grants the user gave on the command line (`--trust`). */
  trust?: TrustGrant[];
  /** The sandbox kind the user chose with `--sandbox`; it replaces the configured kind. */
  sandbox?: SandboxSettings['kind'];
  /** MCP servers the user added for this run (`--mcp`); all their tools are offered. */
  mcpServers?: McpServerConfig[];
}

export interface RunBudgets {
  steps: number;
  tokens?: number;
  timeSeconds?: number;
  /** US dollars. */
  cost?: number;
}

export interface RunPlan {
  recipe: Recipe;
  /** What the command line changed, kept so a resumed run resolves the recipe the same way. */
  overrides: RecipeOverrides;
  agent: AgentConfig;
  profile: ModelProfileConfig;
  /** A model id given on the command line that is not a profile name. */
  modelOverride?: string;
  task: string;
  /** The workspace folder as configured (relative to the current folder), when not the default. */
  workspace?: string;
  tools: Map<string, AnyToolDefinition>;
  contextProviders: ContextProviderDefinition[];
  budgets: RunBudgets;
  sandbox?: SandboxSettings;
  toolSettings: Record<string, Record<string, unknown>>;
  warnings: Diagnostic[];
  agentsConfig: AgentsConfig;
  /** What the user consented to: command-line grants and those in their own configuration. */
  trustGrants: ReadonlySet<TrustGrant>;
  /** What the recipe and its agents files ask for beyond what they may take; runs only when granted. */
  trustRequests: TrustRequest[];
  /** Every MCP server declared for the run, by the agents files, the user, the recipe and the command line. */
  mcpServers: McpServerConfig[];
  /** The agent's tools that name MCP servers' tools (`mcp_fs_read_file`, `mcp_fs_*`): checked when those servers start. */
  mcpToolNames: string[];
}

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
export function pluginFoldersFor(cwd: string, recipe?: Recipe, needed?: Iterable<string>): PluginFolder[] {
  const builtIn = realpathSync(join(packageRoot, 'plugins'));
  const neededBuiltIns = needed ? new Set(needed) : undefined;
  const folders = uniqueExisting([builtIn, join(cwd, 'plugins')]).map((path) => (path === builtIn ? { path, neededBuiltIns } : { path }));
  return [...folders, ...(recipe?.pluginFolders ?? [])];
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

  const agent = resolveAgent(recipe, agents.config, diagnostics);
  // A run loads only the built-in plugins its agent uses; `manus validate` checks them all.
  const needed = agent && !options.checkSchemas ? [...agent.tools, ...agent.contextProviders] : undefined;
  const plugins = await loadPluginFolders(pluginFoldersFor(options.cwd, recipe, needed), { checkSchemas: options.checkSchemas });
  diagnostics.push(...plugins.diagnostics);

  const strict = options.strictParameters !== false;
  const values = parameterValues(recipe, overrides.parameters ?? {}, strict, diagnostics);
  const task = resolveTask(recipe, overrides, values, strict, diagnostics);
  const workspace = overrides.workspace ?? (recipe.workspace && values ? renderTemplate(recipe.workspace, values) : recipe.workspace);
  if (!agent) throw new ConfigError(diagnostics);

  const mcpServers = mergeMcpServers(agents.config.mcpServers, userConfig.config.mcpServers, recipe.mcpServers, overrides.mcpServers ?? []);
  const mcpToolNames = agent.tools.filter((name) => !plugins.tools.has(name) && serverOfToolName(name, mcpServers.map((server) => server.name)) !== undefined);
  const tools = selectTools(agent, plugins, diagnostics, new Set(mcpToolNames), mcpServers);
  const contextProviders = selectContextProviders(agent, plugins, diagnostics);
  const trust = reviewRecipeTrust({
    recipe,
    agent,
    agentsConfig: agents.config,
    cwd: options.cwd,
    parameterValues: values,
    workspaceFromCommandLine: overrides.workspace !== undefined,
    userParameters: new Set(Object.keys(overrides.parameters ?? {})),
    tools,
  });
  if (options.reportTrust) {
    diagnostics.push(...trust.removals);
    diagnostics.push(...trust.requests.map(trustRequestNote));
  } else {
    diagnostics.push(...trust.removals.map((removal): Diagnostic => ({ ...removal, severity: 'warning' })));
  }

  const { profile, modelOverride } = resolveProfile(agent, agents.config, overrides.model, diagnostics);
  const environment = options.environment ?? process.env;
  // A run asks only when a key would really be sent; validate names every key the profile reads.
  const keysSent = [defaultApiKeyEnv(profile), ...Object.values(profile.headersEnv ?? {})]
    .filter((variable) => options.reportTrust || Boolean(environment[variable]));
  const endpoint = profileEndpointRequest(profile, keysSent);
  if (endpoint) {
    trust.requests.push(endpoint);
    if (options.reportTrust) diagnostics.push(trustRequestNote(endpoint));
  }
  if ((overrides.maxCost ?? recipe.budgets.cost) !== undefined && !profile.price) {
    diagnostics.push({
      severity: 'error',
      message: `a cost budget needs prices: add price: { input_per_million, output_per_million } to the model profile '${profile.name}'`,
      location: profile.location ?? { file: recipe.file },
    });
  }
  if (diagnostics.some((diagnostic) => diagnostic.severity === 'error')) throw new ConfigError(diagnostics);

  return {
    recipe,
    overrides,
    agent: {
      ...agent,
      permissions: trust.permissions,
    },
    profile,
    modelOverride,
    task: task ?? '',
    workspace,
    tools,
    contextProviders,
    budgets: {
      steps: overrides.maxSteps ?? recipe.budgets.steps ?? agent.maxSteps,
      tokens: overrides.maxTokens ?? recipe.budgets.tokens,
      timeSeconds: overrides.maxTimeSeconds ?? recipe.budgets.timeSeconds,
      cost: overrides.maxCost ?? recipe.budgets.cost,
    },
    sandbox: recipe.sandbox ?? agent.sandbox,
    toolSettings: mergeToolSettings(agent.toolSettings, recipe.toolSettings),
    warnings: diagnostics,
    agentsConfig: agents.config,
    trustGrants: new Set([...(overrides.trust ?? []), ...userConfig.config.trust]),
    trustRequests: trust.requests,
    mcpServers,
    mcpToolNames,
  };
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

/** A tool the agent lists that no plugin in the run's folders defines is an error, typo or not. */
function selectTools(
  agent: AgentConfig,
  plugins: LoadedPlugins,
  diagnostics: Diagnostic[],
  mcpToolNames: ReadonlySet<string>,
  mcpServers: readonly McpServerConfig[],
): Map<string, AnyToolDefinition> {
  const tools = new Map<string, AnyToolDefinition>();
  for (const name of agent.tools) {
    // An MCP server's tools are known once it starts; the names are checked then.
    if (mcpToolNames.has(name)) continue;
    const loaded = plugins.tools.get(name);
    if (loaded) tools.set(name, loaded.tool);
    else if (name.startsWith('mcp_')) diagnostics.push(mcpServerNotDeclared(agent, name, mcpServers));
    else diagnostics.push(toolNotAvailable(agent, name, [...plugins.tools.keys(), ...(plugins.unloadedNames ?? [])]));
  }
  return tools;
}

function mcpServerNotDeclared(agent: AgentConfig, tool: string, servers: readonly McpServerConfig[]): Diagnostic {
  const declared = servers.map((server) => server.name);
  return {
    severity: 'error',
    message: `agent '${agent.name}' lists the tool '${tool}', but no MCP server it could belong to is declared (mcp_<server>_<tool>); declared MCP servers: ${declared.join(', ') || 'none'}`,
    location: agent.toolLocations[tool] ?? agent.location,
  };
}

/** The error for a tool an agent lists but no plugin of the run defines. */
export function toolNotAvailable(agent: AgentConfig, tool: string, available: Iterable<string>): Diagnostic {
  return {
    severity: 'error',
    message: `agent '${agent.name}' lists the tool '${tool}', which no plugin defines${didYouMean(tool, available)}`,
    location: agent.toolLocations[tool] ?? agent.location,
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
  if (model && agents.profiles.has(model)) return { profile: agents.profiles.get(model)! };
  const profile = agents.profiles.get(agent.llm);
  if (profile) return { profile, modelOverride: model };
  if (agent.llm !== agentDefaults.llm) {
    diagnostics.push({
      severity: 'error',
      message: `agent '${agent.name}' uses the model profile '${agent.llm}', which is not declared under llm:${didYouMean(agent.llm, agents.profiles.keys())}`,
      location: agent.location,
    });
  }
  return { profile: fallbackProfile, modelOverride: model };
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
    if (typeof converted === 'object') diagnostics.push({ severity: 'error', message: `--param ${parameter.name}: ${converted.problem}`, location: parameter.location });
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
  }
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
