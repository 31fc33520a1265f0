/**
 * `manus inspect`: everything a recipe, or each recipe of a pack, would use and start, found
 * before anything runs: its agents and their tools, the plugin files that would load (with their
 * sha256 hashes), the MCP servers and the commands that start them, the check and on_failure
 * commands, the prompt files it sends the model, the sandbox and the network it asks for, and
 * which of these need the user's consent (`--trust`). No plugin code but the package's own runs:
 * other plugins are read from their files.
 */
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, formatLocation, type Diagnostic } from '../contract/errors.js';
import { packageRoot } from '../config/package-root.js';
import { pluginFoldersFor, resolveRecipe, type RunPlan } from './recipe/resolve-recipe.js';
import { describeTrustRequest, grantsNeeded, type TrustRequest } from './recipe/recipe-requests.js';
import { trustGrantMeanings, type TrustGrant } from '../contract/trust-grants.js';
import { emptyAgentsConfig, loadAgentsFile } from './recipe/load-agents.js';
import { sandboxDefaults } from '../config/defaults.js';
import { isTrustedServer, type McpServerConfig } from '../features/mcp/server-config.js';
import { serversNeeded } from '../features/mcp/run-servers.js';
import { a2aToolName } from '../features/a2a/a2a-config.js';
import { allSteps, type FlowStepDefinition } from '../config/flow-definition.js';
import type { PermissionSettings } from '../config/types.js';
import type { FlowAgent } from '../config/flow-plan.js';
import { agentToolPrefix } from '../features/flow/agent-tool-names.js';
import { kernelTools } from '../kernel/plugin-loading/kernel-tools.js';
import { loadPluginFolders, type LoadedPlugins } from '../kernel/plugin-loading/load-plugins.js';
import { packOfFile, packRecipes } from '../features/packs/installed-packs.js';
import type { Pack } from '../config/pack-manifest.js';
import { pluginLabel, scanPluginFolder } from '../kernel/plugin-loading/plugin-scan.js';
import { unqualifiedName } from '../kernel/plugin-loading/qualified-names.js';
import { builtInManifest } from '../kernel/plugin-loading/built-in-plugins.js';

export interface InspectedTool {
  name: string;
  /** Where it comes from: a plugin file, the runtime itself, an MCP server, or another agent. */
  source: 'plugin' | 'built-in plugin' | 'runtime' | 'mcp server' | 'a2a agent' | 'agent';
  file?: string;
  pack?: string;
  server?: string;
}

export interface InspectedAgent {
  name: string;
  description: string;
  file?: string;
  pack?: string;
  /** The flow steps that run it; none for a recipe with one agent. */
  steps: string[];
  modelProfile: string;
  endpoint?: string;
  tools: InspectedTool[];
  permissions: Omit<PermissionSettings, 'locations'>;
}

export interface InspectedPluginFolder {
  folder: string;
  pack?: string;
  /** The package's own plugins: only those the run uses load, from the package's build. */
  builtIn: boolean;
  plugins: Array<{ entry: string; names: string[]; files: Array<{ path: string; sha256: string; bytes: number }> }>;
}

export interface InspectedMcpServer {
  name: string;
  transport: 'stdio' | 'http';
  command?: string[];
  cwd?: string;
  url?: string;
  declaredIn: string;
  /** Whether the run starts it: an agent uses its tools, or the user added it with --mcp. */
  starts: boolean;
  /** Where it runs: on the host (the user's or the package's server, or with --trust mcp) or in the run's sandbox. */
  runs: string;
  needs?: TrustGrant;
  /** A server may ask the run's model for completions (MCP sampling) only with this grant. */
  samplingNeeds: TrustGrant;
}

export interface InspectedCommand {
  name: string;
  command: string;
  runs: string;
}

export interface InspectedStep {
  name: string;
  kind: string;
  agent?: string;
  /** The step's place in the flow: `research`, `report.draft`, ... */
  path: string;
}

export interface InspectedTrustRequest {
  grant: TrustGrant;
  meaning: string;
  setting: string;
  detail?: string;
  location?: string;
  text: string;
}

export interface RecipeInspection {
  kind: 'recipe';
  name: string;
  description: string;
  file: string;
  pack?: { name: string; version?: string; folder: string };
  /** In a pack's inspection: what `manus run` takes for it, `<package>/<recipe>`. */
  runAs?: string;
  parameters: Array<{ name: string; type: string; required: boolean; default?: unknown }>;
  agents: InspectedAgent[];
  /** The prompt files the run reads and sends the model: the recipe's and its agents'. */
  promptFiles: string[];
  flow?: { steps: InspectedStep[]; answer?: string };
  pluginFolders: InspectedPluginFolder[];
  mcpServers: InspectedMcpServer[];
  checks: Array<{ name: string; kind: string; command?: string; file?: string; pattern?: string; runs?: string }>;
  onFailure?: InspectedCommand;
  sandbox: { kind: string; network: boolean; image: string; memoryMb: number; cpus: number; pids: number; passEnv: string[]; declaredBy: string; runs: string };
  network: { sandbox: boolean; allowHosts?: string[]; only?: string[]; modelEndpoints: Array<{ profile: string; url: string }>; mcpUrls: string[]; a2aUrls: string[] };
  budgets: RunPlan['budgets'];
  /** What needs the user's consent, each with the grant that allows it. */
  trust: InspectedTrustRequest[];
  /** `--trust` with these runs it without questions. */
  grantsNeeded: TrustGrant[];
  diagnostics: Array<{ severity: string; message: string; location?: string }>;
}

export interface PackInspection {
  kind: 'pack';
  name: string;
  version?: string;
  description?: string;
  folder: string;
  agentsFile?: string;
  agents: string[];
  pluginFolders: InspectedPluginFolder[];
  recipes: RecipeInspection[];
  grantsNeeded: TrustGrant[];
}

export async function inspectRecipe(file: string, cwd: string): Promise<RecipeInspection> {
  const plan = await resolveRecipe(file, { cwd, strictParameters: false, reportTrust: true, importOnlyBuiltIns: true });
  const agents = runAgents(plan);
  const plugins = await loadPluginFolders(pluginFoldersFor(cwd, plan.recipe, agents.flatMap(({ agent }) => agent.config.tools), plan.packs), { importOnlyBuiltIns: true });
  const sandbox = plan.sandbox ?? { kind: 'auto', network: false, options: {} };
  const sandboxPlace = describeSandbox(sandbox.kind, plan.trustGrants);
  const starting = serversNeeded(plan.mcpServers, plan.mcpToolNames);
  const trust = plan.trustRequests.map(inspectedRequest);
  // Only a command runs here, in the sandbox or with the grant; an HTTP server is somewhere else.
  const serverRequests = plan.mcpServers.filter((server) => starting.has(server) && !isTrustedServer(server) && server.transport.kind === 'stdio');
  const grants = new Set<TrustGrant>([...grantsNeeded(plan.trustRequests), ...(serverRequests.length > 0 ? ['mcp' as const] : [])]);
  for (const server of serverRequests) {
    trust.push({
      grant: 'mcp',
      meaning: trustGrantMeanings.mcp,
      setting: `mcp_servers.${server.name}`,
      location: server.location && formatLocation(server.location),
      text: `${trustGrantMeanings.mcp} (mcp_servers.${server.name}${server.location ? ` at ${formatLocation(server.location)}` : ''}); without it the server runs in the run's sandbox`,
    });
  }
  const ownPack = packOfFile(plan.recipe.file);
  const commandCheck = (name: string, command: string): InspectedCommand => ({ name, command, runs: sandboxPlace });
  return {
    kind: 'recipe',
    name: plan.recipe.name,
    description: plan.recipe.description,
    file: plan.recipe.file,
    pack: ownPack && packSummary(ownPack),
    parameters: plan.recipe.parameters.map((parameter) => ({ name: parameter.name, type: parameter.type, required: parameter.required, default: parameter.default })),
    agents: agents.map(({ agent, steps }) => inspectAgent(agent, steps, plugins, plan)),
    promptFiles: [...new Set([...(plan.recipe.promptFile ? [plan.recipe.promptFile] : []), ...agents.flatMap(({ agent }) => agent.config.promptFiles ?? [])])],
    flow: plan.recipe.flow && { steps: flowSteps(plan.recipe.flow.steps, ''), answer: plan.recipe.flow.answer },
    pluginFolders: inspectPluginFolders(pluginFoldersFor(cwd, plan.recipe, undefined, plan.packs), agents.flatMap(({ agent }) => agent.config.tools)),
    mcpServers: plan.mcpServers.map((server) => inspectServer(server, starting.has(server), sandboxPlace)),
    checks: plan.recipe.checks.map((check) => ({
      name: check.name,
      kind: check.kind,
      ...(check.kind === 'command' ? { command: check.command, runs: sandboxPlace } : {}),
      ...(check.kind === 'file' ? { file: check.file, ...(check.matches ? { pattern: check.matches } : {}) } : {}),
      ...(check.kind === 'answer_matches' ? { pattern: check.pattern } : {}),
    })),
    onFailure: plan.recipe.retry.onFailure === undefined ? undefined : commandCheck('on_failure', plan.recipe.retry.onFailure),
    sandbox: {
      kind: sandbox.kind,
      network: sandbox.network,
      image: String(sandbox.options.image ?? sandboxDefaults.image),
      memoryMb: Number(sandbox.options.memory_mb ?? sandboxDefaults.memory_mb),
      cpus: Number(sandbox.options.cpus ?? sandboxDefaults.cpus),
      pids: Number(sandbox.options.pids ?? sandboxDefaults.pids),
      passEnv: Array.isArray(sandbox.options.pass_env) ? sandbox.options.pass_env.map(String) : [],
      declaredBy: plan.recipe.sandbox ? 'the recipe' : plan.sandbox ? `agent '${plan.agent.name}'` : 'the default',
      runs: sandboxPlace,
    },
    network: {
      sandbox: sandbox.network,
      ...(sandbox.allowHosts ? { allowHosts: [...sandbox.allowHosts] } : {}),
      // The user's ceiling on every connection of the run (network.only in their own config).
      ...(plan.networkAccess.only ? { only: [...plan.networkAccess.only] } : {}),
      modelEndpoints: uniqueBy(agents.map(({ agent }) => agent.profile), (profile) => profile.name)
        .map((profile) => ({ profile: profile.name, url: profile.baseUrl ?? 'the provider\'s default (OPENAI_BASE_URL or api.openai.com)' })),
      mcpUrls: plan.mcpServers.flatMap((server) => (server.transport.kind === 'http' && starting.has(server) ? [server.transport.url] : [])),
      a2aUrls: (plan.a2aAgents ?? []).map((agent) => agent.url),
    },
    budgets: plan.budgets,
    trust,
    grantsNeeded: [...grants],
    diagnostics: plan.warnings.filter((diagnostic) => diagnostic.severity !== 'note').map(shownDiagnostic),
  };
}

/** A pack: its parts, its plugin files, and each of its recipes inspected. */
export async function inspectPack(pack: Pack, cwd: string): Promise<PackInspection> {
  const agents = emptyAgentsConfig();
  if (existsSync(pack.agentsFile)) {
    const problems = loadAgentsFile(pack.agentsFile, agents).filter((diagnostic) => diagnostic.severity === 'error');
    if (problems.length > 0) throw new ConfigError(problems);
  }
  const recipes: RecipeInspection[] = [];
  const problems: Diagnostic[] = [];
  for (const recipe of packRecipes(pack)) {
    try {
      recipes.push({ ...(await inspectRecipe(recipe.file, cwd)), runAs: `${pack.name}/${recipe.name}` });
    } catch (error) {
      if (!ConfigError.isInstance(error)) throw error;
      problems.push(...error.diagnostics);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    kind: 'pack',
    name: pack.name,
    version: pack.version,
    description: pack.description,
    folder: pack.folder,
    agentsFile: existsSync(pack.agentsFile) ? pack.agentsFile : undefined,
    agents: [...agents.agents.keys()],
    pluginFolders: existsSync(pack.pluginsFolder) ? inspectPluginFolders([{ path: pack.pluginsFolder, pack: pack.name }], []) : [],
    recipes,
    grantsNeeded: [...new Set(recipes.flatMap((recipe) => recipe.grantsNeeded))],
  };
}

function packSummary(pack: Pack): { name: string; version?: string; folder: string } {
  return { name: pack.name, version: pack.version, folder: pack.folder };
}

/** The agents a run would use: the recipe's, or each flow step's, and those they call as tools. */
function runAgents(plan: RunPlan): Array<{ agent: FlowAgent; steps: string[] }> {
  const found: Array<{ agent: FlowAgent; steps: string[] }> = [];
  if (plan.flow) {
    const stepsByKey = new Map<unknown, string[]>();
    for (const step of allSteps(plan.flow.definition.steps)) {
      if (step.agent !== undefined) stepsByKey.set(step.agent, [...(stepsByKey.get(step.agent) ?? []), step.name]);
    }
    for (const [key, agent] of plan.flow.agents) found.push({ agent, steps: stepsByKey.get(key) ?? [] });
  } else {
    const tools = [...plan.tools.keys()];
    found.push({
      agent: { config: plan.agent, tools, mcpToolNames: plan.mcpToolNames, agentTools: [], contextProviders: plan.contextProviders, toolSettings: plan.toolSettings, profile: plan.profile },
      steps: [],
    });
  }
  for (const agent of plan.callableAgents.values()) found.push({ agent, steps: [] });
  return found;
}

function inspectAgent(agent: FlowAgent, steps: string[], plugins: LoadedPlugins, plan: RunPlan): InspectedAgent {
  const { config } = agent;
  const kernel = new Set(kernelTools.map((tool) => tool.name));
  const builtIn = realpathSync(join(packageRoot, 'plugins'));
  const serverNames = plan.mcpServers.map((server) => server.name);
  const tools = config.tools.map((name): InspectedTool => {
    if (name.startsWith(agentToolPrefix)) return { name, source: 'agent' };
    if (kernel.has(name)) return { name, source: 'runtime' };
    if (agent.mcpToolNames.includes(name)) return { name, source: 'mcp server', server: serverNames.find((server) => name.startsWith(`mcp_${server}_`)) };
    const remote = plan.a2aAgents?.find((each) => a2aToolName(each.name) === name);
    if (remote) return { name, source: 'a2a agent', server: remote.name };
    const loaded = plugins.tools.get(name);
    if (loaded) return { name, source: realpathSync(loaded.file).startsWith(builtIn) ? 'built-in plugin' : 'plugin', file: loaded.file, pack: loaded.pack };
    // The name as the agent wrote it: `weather@acme-weather` says which pack's file it is.
    const written = Object.keys(config.toolLocations).find((key) => key !== name && unqualifiedName(key) === name);
    const preferred = written ?? (config.pack !== undefined ? `${name}@${config.pack}` : name);
    const read = (plugins.declaredNames?.get(preferred) ?? plugins.declaredNames?.get(name))?.[0];
    return { name, source: 'plugin', file: read?.file, pack: read?.pack };
  });
  return {
    name: config.name,
    description: config.description,
    file: config.location?.file,
    pack: config.pack,
    steps,
    modelProfile: agent.profile.name,
    endpoint: agent.profile.baseUrl,
    tools,
    permissions: writtenPermissions(config.permissions),
  };
}

function flowSteps(steps: readonly FlowStepDefinition[], prefix: string): InspectedStep[] {
  return steps.flatMap((step) => {
    const path = prefix ? `${prefix}.${step.name}` : step.name;
    const agent = typeof step.agent === 'string' ? step.agent : step.agent ? `${step.agent.name} (inline)` : undefined;
    const own: InspectedStep = { name: step.name, kind: step.kind, path, ...(agent ? { agent } : {}) };
    const inner = [...(step.steps ?? []), ...(step.step ? [step.step] : [])];
    return [own, ...flowSteps(inner, path)];
  });
}

/** Every plugin file that would load; the package's own plugins are listed by the names the run uses. */
function inspectPluginFolders(folders: Array<{ path: string; pack?: string }>, usedNames: string[]): InspectedPluginFolder[] {
  const builtIn = realpathSync(join(packageRoot, 'plugins'));
  const used = new Set(usedNames);
  return folders.filter((folder) => existsSync(folder.path)).map((folder) => {
    const isBuiltIn = realpathSync(folder.path) === builtIn;
    const plugins = scanPluginFolder(folder.path)
      // The package's own plugins are named by the build's manifest, not by reading their sources.
      .map((plugin) => (isBuiltIn ? { ...plugin, names: [...(builtInManifest().plugins.get(pluginLabel(plugin).replace(/\.[mc]?[jt]s$/, ''))?.names ?? plugin.names)] } : plugin))
      .filter((plugin) => !isBuiltIn || plugin.names.some((name) => used.has(name)))
      // The package's own files are the runtime's: listed by entry, not hashed one by one.
      .map((plugin) => ({ entry: plugin.entry, names: plugin.names, files: isBuiltIn ? [] : plugin.files }));
    return { folder: folder.path, ...(folder.pack ? { pack: folder.pack } : {}), builtIn: isBuiltIn, plugins };
  });
}

function inspectServer(server: McpServerConfig, starts: boolean, sandboxPlace: string): InspectedMcpServer {
  const trusted = isTrustedServer(server);
  const base = { name: server.name, declaredIn: server.declaredIn, starts, samplingNeeds: 'sampling' as const };
  const runs = trusted ? 'on the host (declared by you or the package)' : `in the run's sandbox (${sandboxPlace}); on the host with --trust mcp`;
  if (server.transport.kind === 'http') return { ...base, transport: 'http', url: server.transport.url, runs: 'a remote server: nothing starts here' };
  return { ...base, transport: 'stdio', command: [server.transport.command, ...server.transport.args], cwd: server.transport.cwd, runs, ...(trusted ? {} : { needs: 'mcp' as const }) };
}

function describeSandbox(kind: string, grants: ReadonlySet<TrustGrant>): string {
  switch (kind) {
    case 'host':
      return grants.has('host') ? 'on the host, with no isolation (granted)' : 'on the host, with no isolation: needs --trust host';
    case 'bwrap':
      return 'in bubblewrap';
    case 'docker':
      return 'in a Docker container';
    default:
      return 'in bubblewrap, else Docker, else on the host only with your consent';
  }
}

function inspectedRequest(request: TrustRequest): InspectedTrustRequest {
  return {
    grant: request.grant,
    meaning: trustGrantMeanings[request.grant],
    setting: request.setting,
    detail: request.detail,
    location: request.location && formatLocation(request.location),
    text: describeTrustRequest(request),
  };
}

function shownDiagnostic(diagnostic: Diagnostic): { severity: string; message: string; location?: string } {
  return { severity: diagnostic.severity, message: diagnostic.message, location: diagnostic.location && formatLocation(diagnostic.location) };
}

function uniqueBy<T>(items: T[], key: (item: T) => string): T[] {
  return [...new Map(items.map((item) => [key(item), item])).values()];
}

/** An agent's `permissions:` block as written, without where each rule stood. */
function writtenPermissions({ locations: _locations, ...written }: PermissionSettings): Omit<PermissionSettings, 'locations'> {
  return written;
}
