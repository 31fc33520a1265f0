/**
 * What a recipe, or an agents.yaml that ships beside one or in a project, may do on its own
 * authority: tighten. Permissions merge, so such a file can add `deny` and `ask` entries but not
 * remove any. Everything that loosens the sandbox or the browser, or moves the workspace away from
 * the recipe's folder and the current folder, is only a request: it runs when the user grants it
 * (`--trust`, their own config, or a yes at the terminal), never on the file's word.
 */
import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { formatLocation, type Diagnostic, type SourceLocation } from '../../contract/errors.js';
import type { AnyToolDefinition, SandboxSettings } from '../../contract/tool.js';
import { isInside } from '../../services/workspace-paths.js';
import { hostPatternCovers, parseHostPattern, type HostPattern } from '../../services/network/host-patterns.js';
import { isTrustedServer, type McpServerConfig } from '../../features/mcp/server-config.js';
import { isTrustedA2aAgent, type A2aAgentConfig } from '../../features/a2a/a2a-config.js';
import { sandboxDefaults } from '../../config/defaults.js';
import type { SettingLocations } from '../../config/setting-locations.js';
import { renderTemplate, templatePlaceholders } from '../../config/template.js';
import { trustGrantMeanings, trustGrantNames, type TrustGrant } from '../../contract/trust-grants.js';
import type { AgentConfig, AgentsConfig, ModelProfileConfig, ParameterValue, PermissionBlock, PermissionPolicy, PermissionSettings, Recipe } from '../../config/types.js';
import type { TrustRequest } from '../../config/run-plan.js';
import { defaultApiKeyEnv } from '../../services/model/model-connection.js';

export type { TrustRequest } from '../../config/run-plan.js';

export interface TrustReview {
  /** The run's permissions: the user's block, the trusted agent's, and every other file's, each deciding on its own. */
  permissions: PermissionPolicy;
  /** Attempts to remove a permission; the permission stays. Errors for `manus validate`. */
  removals: Diagnostic[];
  requests: TrustRequest[];
}

export interface RecipeTrustInput {
  recipe: Recipe;
  /** The agent the recipe runs, as its file defines it. */
  agent: AgentConfig;
  agentsConfig: AgentsConfig;
  cwd: string;
  /** The recipe's parameter values (the user's and the defaults), to render its workspace. */
  parameterValues?: Record<string, ParameterValue>;
  /** The user chose the workspace with --workspace. */
  workspaceFromCommandLine: boolean;
  /** Parameters the user gave with --param. */
  userParameters: ReadonlySet<string>;
  /** The agent's tools, whose `settingGrants` say which of their settings need a grant. */
  tools: ReadonlyMap<string, AnyToolDefinition>;
  /** The `permissions:` block of the user's own config. */
  userPermissions?: PermissionSettings;
  /** Hosts the user's config lists under `network.allow`: a sandbox may name them without a grant. */
  userAllowHosts?: readonly string[];
}

/**
 * The trusted definition an agent is compared with: itself when the package defines it, the
 * package's agent of the same name when another file replaces one, else nothing (the defaults).
 */
export function trustedBaseline(agent: AgentConfig, agentsConfig: AgentsConfig, byName: boolean): AgentConfig | undefined {
  if (agent.origin?.trusted) return agent;
  return byName ? agentsConfig.trustedAgents.get(agent.name) : undefined;
}

/** Reviews a recipe and its agent: the merged permissions, the removals tried, the grants asked for. */
export function reviewRecipeTrust(input: RecipeTrustInput): TrustReview {
  const { recipe, agent } = input;
  const baseline = trustedBaseline(agent, input.agentsConfig, typeof recipe.agent === 'string');
  const removals = agent === baseline ? [] : agentPermissionRemovals(agent, baseline);
  const agentPermissions = mergePermissions(baseline?.permissions, agent.permissions);
  if (recipe.permissions) removals.push(...recipePermissionRemovals(recipe, agent.name, agentPermissions));
  const blocks: PermissionBlock[] = [];
  if (input.userPermissions) blocks.push({ source: 'your config', settings: input.userPermissions });
  if (baseline && baseline !== agent) blocks.push({ source: `the package's agent '${baseline.name}'`, settings: baseline.permissions });
  blocks.push({ source: `agent '${agent.name}'`, settings: agent.permissions });
  if (recipe.permissions) blocks.push({ source: 'the recipe', settings: recipe.permissions });

  const sandboxFromRecipe = recipe.sandbox !== undefined;
  const requests = sandboxRequests(
    sandboxFromRecipe ? recipe.sandbox : agent.sandbox,
    (sandboxFromRecipe ? recipe.settingLocations : agent.settingLocations) ?? {},
    baseline?.sandbox,
    baseline ? `agent '${baseline.name}'` : undefined,
    input.userAllowHosts,
  );
  for (const tool of input.tools.values()) {
    requests.push(...toolSettingRequests(
      tool,
      [
        { settings: recipe.toolSettings[tool.name], locations: recipe.settingLocations },
        { settings: agent.toolSettings[tool.name], locations: agent.settingLocations },
      ],
      baseline?.toolSettings[tool.name],
    ));
  }
  const workspace = workspaceRequest(input);
  if (workspace) requests.push(workspace);
  return { permissions: { blocks }, removals, requests: uniqueRequests(requests) };
}

/**
 * A model profile from a file that is not trusted, with an endpoint of its own, would send the
 * user's keys (`keysSent`: the variables it reads) to a host that file chose: a request for `env`.
 */
export function profileEndpointRequest(profile: ModelProfileConfig, keysSent: readonly string[]): TrustRequest | undefined {
  if (profile.trusted || profile.baseUrl === undefined || keysSent.length === 0) return undefined;
  return {
    grant: 'env',
    setting: `llm.${profile.name}.base_url: ${profile.baseUrl}`,
    detail: `which would receive ${keysSent.join(', ')}`,
    location: profile.location,
  };
}

/** Every environment variable a profile's requests carry: its API key and its `headers_env`. */
export function profileKeys(profile: ModelProfileConfig): string[] {
  return [...new Set([defaultApiKeyEnv(profile), ...Object.values(profile.headersEnv ?? {})])];
}

/**
 * An MCP server from a file that is not trusted, handed the user's environment variables (a stdio
 * server's `env: {NAME: {env: VARIABLE}}`, an HTTP server's `headers_env`), would give their values
 * to a program or a host that file chose: a request for `env`, as `sandbox.pass_env` is.
 * `variablesSent` are the variables it would receive.
 */
export function mcpServerEnvironmentRequest(server: McpServerConfig, variablesSent: readonly string[]): TrustRequest | undefined {
  if (isTrustedServer(server) || variablesSent.length === 0) return undefined;
  const setting = server.transport.kind === 'http' ? 'headers_env' : 'env';
  return {
    grant: 'env',
    setting: `mcp_servers.${server.name}.${setting}`,
    detail: `which would give ${server.transport.kind === 'http' ? server.transport.url : `the command ${server.transport.command}`} ${variablesSent.join(', ')}`,
    location: server.location,
  };
}

/**
 * A remote A2A agent from a file that is not trusted, handed the user's environment variables in
 * its `headers_env`, would give their values to a host that file chose: a request for `env`, as
 * an HTTP MCP server's `headers_env` is.
 */
export function a2aAgentEnvironmentRequest(agent: A2aAgentConfig, variablesSent: readonly string[]): TrustRequest | undefined {
  if (isTrustedA2aAgent(agent) || variablesSent.length === 0) return undefined;
  return {
    grant: 'env',
    setting: `a2a.${agent.name}.headers_env`,
    detail: `which would give ${agent.url} ${variablesSent.join(', ')}`,
    location: agent.location,
  };
}

/**
 * Reviews the agents of an agents.yaml that is not the package's: what each removes and asks for.
 * `tools` are the tools the agents may name, for the settings that need a grant.
 */
export function reviewAgentsTrust(config: AgentsConfig, tools: ReadonlyMap<string, AnyToolDefinition>): Omit<TrustReview, 'permissions'> {
  const removals: Diagnostic[] = [];
  const requests: TrustRequest[] = [];
  for (const profile of config.profiles.values()) {
    const endpoint = profileEndpointRequest(profile, profileKeys(profile));
    if (endpoint) requests.push(endpoint);
  }
  for (const agent of config.agents.values()) {
    if (agent.origin?.trusted) continue;
    const baseline = config.trustedAgents.get(agent.name);
    removals.push(...agentPermissionRemovals(agent, baseline));
    requests.push(...sandboxRequests(agent.sandbox, agent.settingLocations ?? {}, baseline?.sandbox, baseline ? `agent '${baseline.name}'` : undefined));
    for (const name of agent.tools) {
      const tool = tools.get(name);
      if (tool) requests.push(...toolSettingRequests(tool, [{ settings: agent.toolSettings[name], locations: agent.settingLocations }], baseline?.toolSettings[name]));
    }
  }
  return { removals, requests: uniqueRequests(requests) };
}

/** The deny and ask rules of two blocks together: what a file that leaves some out would have removed. */
function mergePermissions(first: PermissionSettings | undefined, second: PermissionSettings): Pick<PermissionSettings, 'deny' | 'ask'> {
  return {
    deny: [...new Set([...(first?.deny ?? []), ...second.deny])],
    ask: [...new Set([...(first?.ask ?? []), ...second.ask])],
  };
}

function agentPermissionRemovals(agent: AgentConfig, baseline: AgentConfig | undefined): Diagnostic[] {
  if (!baseline) return [];
  const locations = agent.settingLocations ?? {};
  const removals: Diagnostic[] = [];
  const where = (list: 'deny' | 'ask') => locations[`permissions.${list}`] ?? locations.permissions ?? agent.location;
  const because = `an agents.yaml in a project or beside a recipe can add permissions, never remove them`;
  for (const tool of baseline.permissions.deny) {
    if (agent.permissions.deny.includes(tool)) continue;
    removals.push(removal(`agent '${agent.name}' leaves out deny '${tool}' of the package's agent '${baseline.name}'; ${because}, so '${tool}' stays denied`, where('deny')));
  }
  for (const tool of baseline.permissions.ask) {
    if (agent.permissions.ask.includes(tool) || agent.permissions.deny.includes(tool)) continue;
    removals.push(removal(`agent '${agent.name}' leaves out ask '${tool}' of the package's agent '${baseline.name}'; ${because}, so calls to '${tool}' still need approval`, where('ask')));
  }
  return removals;
}

/** A recipe's list replaces nothing: leaving out an entry of the agent's list is an attempt to remove it. */
function recipePermissionRemovals(recipe: Recipe, agentName: string, agentPermissions: Pick<PermissionSettings, 'deny' | 'ask'>): Diagnostic[] {
  const locations = recipe.settingLocations ?? {};
  const permissions = recipe.permissions!;
  const removals: Diagnostic[] = [];
  const because = 'a recipe can add to its agent\'s permissions, never remove them';
  if (locations['permissions.deny']) {
    for (const tool of agentPermissions.deny) {
      if (permissions.deny.includes(tool)) continue;
      removals.push(removal(`permissions.deny leaves out '${tool}', which agent '${agentName}' denies; ${because}, so '${tool}' stays denied`, locations['permissions.deny']));
    }
  }
  if (locations['permissions.ask']) {
    for (const tool of agentPermissions.ask) {
      if (permissions.ask.includes(tool) || permissions.deny.includes(tool)) continue;
      removals.push(removal(`permissions.ask leaves out '${tool}', which agent '${agentName}' asks about; ${because}, so calls to '${tool}' still need approval`, locations['permissions.ask']));
    }
  }
  return removals;
}

function removal(message: string, location: SourceLocation | undefined): Diagnostic {
  return { severity: 'error', message, location };
}

function sandboxRequests(
  sandbox: SandboxSettings | undefined,
  locations: SettingLocations,
  baseline: SandboxSettings | undefined,
  baselineName: string | undefined,
  userAllowHosts: readonly string[] = [],
): TrustRequest[] {
  if (!sandbox) return [];
  const requests: TrustRequest[] = [];
  const at = (key: string) => locations[`sandbox.${key}`] ?? locations.sandbox;
  const whose = baselineName ? `${baselineName}'s` : 'the default';
  if (sandbox.kind === 'host' && baseline?.kind !== 'host') {
    const setting = locations['sandbox.kind'] ? 'sandbox.kind: host' : 'sandbox: host';
    requests.push({ grant: 'host', setting, location: at('kind') });
  }
  if (sandbox.network && !baseline?.network) requests.push({ grant: 'network', setting: 'sandbox.network: true', location: at('network') });
  const hosts = hostsNeedingGrant(sandbox, baseline, userAllowHosts);
  if (hosts.length > 0) {
    requests.push({ grant: 'hosts', setting: `sandbox.network.allow: [${hosts.join(', ')}]`, location: locations['sandbox.network'] ?? locations.sandbox });
  }
  const options = sandbox.options;
  const baselineOptions = baseline?.options ?? {};
  const passed = stringList(options.pass_env).filter((name) => !stringList(baselineOptions.pass_env).includes(name));
  if (passed.length > 0) requests.push({ grant: 'env', setting: `sandbox.pass_env: [${passed.join(', ')}]`, location: at('pass_env') });
  // Whoever commands run as reads what that user (and group) may read on the host: the user's choice.
  const user = optionText(options.user);
  if (user !== undefined && user.trim() !== optionText(baselineOptions.user)?.trim()) {
    requests.push({ grant: 'user', setting: `sandbox.user: ${user}`, detail: `${whose} is ${optionText(baselineOptions.user) ?? 'nobody (65534), or in Docker the workspace\'s owner'}`, location: at('user') });
  }
  const image = optionText(options.image) ?? sandboxDefaults.image;
  const baselineImage = optionText(baselineOptions.image) ?? sandboxDefaults.image;
  if (image !== baselineImage) {
    requests.push({ grant: 'image', setting: `sandbox.image: ${image}`, detail: `${whose} is ${baselineImage}`, location: at('image') });
  }
  const limits: Array<[string, number]> = [['memory_mb', sandboxDefaults.memory_mb], ['cpus', sandboxDefaults.cpus], ['pids', sandboxDefaults.pids]];
  for (const [key, fallback] of limits) {
    const value = optionNumber(options[key]) ?? fallback;
    const allowed = optionNumber(baselineOptions[key]) ?? fallback;
    if (value <= allowed) continue;
    const written = options[key] === undefined ? ' (the default)' : '';
    requests.push({ grant: 'resources', setting: `sandbox.${key}: ${value}${written}`, detail: `above ${whose} ${allowed}`, location: at(key) });
  }
  return requests;
}

/**
 * The hosts a sandbox names that neither the trusted agent's sandbox nor the user's own
 * `network.allow` already allows: a trusted sandbox with the whole network allows them all.
 */
function hostsNeedingGrant(sandbox: SandboxSettings, baseline: SandboxSettings | undefined, userAllowHosts: readonly string[]): string[] {
  if (!sandbox.allowHosts || baseline?.network) return [];
  const allowed = [...(baseline?.allowHosts ?? []), ...userAllowHosts].map(parseHostPattern).filter(isHostPattern);
  return sandbox.allowHosts.filter((text) => {
    const pattern = parseHostPattern(text);
    return !isHostPattern(pattern) || !allowed.some((outer) => hostPatternCovers(outer, pattern));
  });
}

function isHostPattern(pattern: HostPattern | { problem: string }): pattern is HostPattern {
  return !('problem' in pattern);
}

interface SettingsLayer {
  settings: Record<string, unknown> | undefined;
  locations: SettingLocations | undefined;
}

/**
 * A tool's settings that need a grant, each taken from the first layer that sets it, against the
 * trusted agent's value. A dotted key (`endpoints.tavily`) names a setting inside another.
 */
function toolSettingRequests(tool: AnyToolDefinition, layers: SettingsLayer[], baseline: Record<string, unknown> | undefined): TrustRequest[] {
  const requests: TrustRequest[] = [];
  for (const [key, declared] of Object.entries(tool.settingGrants ?? {})) {
    const path = key.split('.');
    const layer = layers.find((candidate) => settingAt(candidate.settings, path) !== undefined);
    if (!layer) continue;
    const value = settingAt(layer.settings, path);
    if (JSON.stringify(value) === JSON.stringify(settingAt(baseline, path))) continue;
    const { grant, receives = [] } = typeof declared === 'string' ? { grant: declared } : declared;
    requests.push({
      grant,
      setting: `tool_settings.${tool.name}.${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`,
      ...(receives.length > 0 ? { detail: `which would receive ${receives.join(', ')}` } : {}),
      location: settingLocation(layer.locations, `tool_settings.${tool.name}`, path),
    });
  }
  return requests;
}

function settingAt(settings: Record<string, unknown> | undefined, path: readonly string[]): unknown {
  let current: unknown = settings;
  for (const segment of path) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/** Where a setting was written: its own place when known, else the nearest setting around it. */
function settingLocation(locations: SettingLocations | undefined, prefix: string, path: readonly string[]): SourceLocation | undefined {
  for (let length = path.length; length > 0; length--) {
    const location = locations?.[`${prefix}.${path.slice(0, length).join('.')}`];
    if (location) return location;
  }
  return undefined;
}

/**
 * A workspace is the user's when they gave it (--workspace), or when the recipe's template begins
 * with a parameter they gave (--param); otherwise it must stay inside the recipe's folder or the
 * current folder, symbolic links followed.
 */
function workspaceRequest(input: RecipeTrustInput): TrustRequest | undefined {
  const { recipe, parameterValues: values } = input;
  if (input.workspaceFromCommandLine || recipe.workspace === undefined || values === undefined) return undefined;
  const placeholders = templatePlaceholders(recipe.workspace);
  if (placeholders[0]?.offset === 0 && input.userParameters.has(placeholders[0].name)) return undefined;
  // A parameter with no value yet (validation, with no --param) is the user's to give when they run.
  if (placeholders.some((placeholder) => values[placeholder.name] === undefined)) return undefined;
  const rendered = renderTemplate(recipe.workspace, values);
  const folder = realPathOf(resolve(input.cwd, rendered));
  const allowed = [realPathOf(input.cwd), realPathOf(dirname(recipe.file))];
  if (allowed.some((root) => isInside(root, folder))) return undefined;
  return {
    grant: 'workspace',
    setting: `workspace: ${rendered}`,
    detail: folder === resolve(input.cwd, rendered) ? undefined : `which is ${folder}`,
    location: recipe.settingLocations?.workspace,
  };
}

/** The real path of a folder that may not exist yet: its nearest existing ancestor's, resolved. */
function realPathOf(path: string): string {
  let existing = path;
  const rest: string[] = [];
  while (!existsSync(existing)) {
    const parent = dirname(existing);
    if (parent === existing) break;
    rest.unshift(basename(existing));
    existing = parent;
  }
  return join(realpathSync(existing), ...rest);
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function optionText(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function optionNumber(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

function uniqueRequests(requests: TrustRequest[]): TrustRequest[] {
  const seen = new Set<string>();
  return requests.filter((request) => {
    const key = `${request.grant}:${request.setting}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** One line for a request: what it lets the recipe do, the setting, and where it was written. */
export function describeTrustRequest(request: TrustRequest): string {
  const where = request.location ? ` at ${formatLocation(request.location)}` : '';
  const detail = request.detail ? `, ${request.detail}` : '';
  return `${trustGrantMeanings[request.grant]} (${request.setting}${detail}${where})`;
}

/** The grants a set of requests needs, in the order `--trust` lists them. */
export function grantsNeeded(requests: readonly TrustRequest[]): TrustGrant[] {
  return trustGrantNames.filter((grant) => requests.some((request) => request.grant === grant));
}

/** The requests the user has not granted. */
export function ungrantedRequests(requests: readonly TrustRequest[], grants: ReadonlySet<TrustGrant>): TrustRequest[] {
  // The whole network holds every named host.
  return requests.filter((request) => !grants.has(request.grant) && !(request.grant === 'hosts' && grants.has('network')));
}

/** `manus validate`'s note for a request: what it asks for and the grant a run needs. */
export function trustRequestNote(request: TrustRequest): Diagnostic {
  const detail = request.detail ? `, ${request.detail}` : '';
  return {
    severity: 'note',
    message: `asks to ${trustGrantMeanings[request.grant]} (${request.setting}${detail}); a run needs --trust ${request.grant}`,
    location: request.location,
  };
}
