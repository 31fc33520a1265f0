/**
 * The user's own configuration file, `$XDG_CONFIG_HOME/manus/config.yaml` (default
 * `~/.config/manus/config.yaml`). Unlike a recipe or an agents.yaml that ships with one, it is
 * trusted: the grants it lists apply to every run, as if given with `--trust`.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Diagnostic } from '../../contract/errors.js';
import { validateConfig } from '../../config/config-schemas.js';
import { userConfigDefaults } from '../../config/defaults.js';
import type { UserConfigYaml } from '../../config/schema-types.generated.js';
import { readPermissions } from '../../config/agent-definition.js';
import type { PermissionSettings } from '../../config/types.js';
import { parseTrustGrants, type TrustGrant } from '../../contract/trust-grants.js';
import { locate, readYamlFile, type YamlSource } from '../../config/yaml-source.js';
import { readMcpServers, type McpServerConfig } from '../../features/mcp/server-config.js';
import { readA2aAgents, type A2aAgentConfig } from '../../features/a2a/a2a-config.js';
import { defaultNetworkAccess, type NetworkAccess } from '../../services/network/guarded-lookup.js';
import { parseHostPattern } from '../../services/network/host-patterns.js';

export interface UserConfig {
  /** The file read, when there was one. */
  file?: string;
  trust: Set<TrustGrant>;
  /** The user's own MCP servers: offered to every run, and run on the host. */
  mcpServers: McpServerConfig[];
  /** The user's own remote A2A agents: offered to every run, their credentials sent without a grant. */
  a2aAgents?: A2aAgentConfig[];
  /** What the runtime's connections on an agent's behalf may reach. */
  network: NetworkAccess;
  /** Rules for every run, decided beside each agent's and recipe's. */
  permissions?: PermissionSettings;
  /** Hosts a recipe's `sandbox.network.allow` may name without `--trust hosts` (`network.allow`). */
  allowHosts?: string[];
}

/** Where the user's configuration lives; undefined for a user with no home and no XDG_CONFIG_HOME. */
export function userConfigFile(environment: Record<string, string | undefined>): string | undefined {
  if (environment.XDG_CONFIG_HOME) return join(environment.XDG_CONFIG_HOME, 'manus', 'config.yaml');
  const home = environment.HOME || safeHomedir();
  return home ? join(home, '.config', 'manus', 'config.yaml') : undefined;
}

function safeHomedir(): string | undefined {
  try {
    return homedir();
  } catch {
    return undefined;
  }
}

/** Reads the user's configuration; no file means no settings, a bad one is reported with file:line:column. */
export function loadUserConfig(environment: Record<string, string | undefined>): { config: UserConfig; diagnostics: Diagnostic[] } {
  const file = userConfigFile(environment);
  if (!file || !existsSync(file)) return { config: { trust: new Set(), mcpServers: [], network: defaultNetworkAccess }, diagnostics: [] };
  const { source, diagnostics } = readYamlFile(file);
  if (!source) return { config: { file, trust: new Set(), mcpServers: [], network: defaultNetworkAccess }, diagnostics };
  return readUserConfigSource(source);
}

export function readUserConfigSource(source: YamlSource): { config: UserConfig; diagnostics: Diagnostic[] } {
  const diagnostics = validateConfig('user-config', source);
  if (diagnostics.length > 0) return { config: { file: source.file, trust: new Set(), mcpServers: [], network: defaultNetworkAccess }, diagnostics };
  const data = source.data as UserConfigYaml;
  // The schema has already rejected unknown names, with their place in the file.
  const serverDiagnostics: Diagnostic[] = [];
  const mcpServers = readMcpServers(source, ['mcp_servers'], data.mcp_servers, 'user', serverDiagnostics);
  const a2aAgents = readA2aAgents(source, ['a2a'], data.a2a, 'user', serverDiagnostics);
  const only = data.network?.only;
  const network: NetworkAccess = { allowPrivate: data.network?.allow_private ?? userConfigDefaults.network.allow_private, ...(only ? { only } : {}) };
  const permissions = data.permissions === undefined ? undefined : readPermissions(data.permissions, { source, path: ['permissions'], diagnostics: serverDiagnostics });
  const allowHosts = data.network?.allow;
  for (const key of ['allow', 'only'] as const) {
    data.network?.[key]?.forEach((text, index) => {
      const pattern = parseHostPattern(text);
      if ('problem' in pattern) serverDiagnostics.push({ severity: 'error', message: `network.${key}: ${pattern.problem}`, location: locate(source, ['network', key, index]) });
    });
  }
  return {
    config: { file: source.file, trust: parseTrustGrants(data.trust ?? userConfigDefaults.trust), mcpServers, a2aAgents, network, permissions, ...(allowHosts ? { allowHosts } : {}) },
    diagnostics: serverDiagnostics,
  };
}

/** A YAML document that looks like the user configuration rather than a recipe or an agents file. */
export function isUserConfigData(data: unknown): boolean {
  if (!data || typeof data !== 'object') return false;
  const keys = Object.keys(data);
  return keys.includes('trust') && !keys.includes('name') && !keys.includes('agents') && !keys.includes('llm');
}
