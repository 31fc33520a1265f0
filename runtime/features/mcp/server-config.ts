/**
 * MCP servers as declared: `mcp_servers:` in an agents file, a recipe or the user's config, an
 * mcpServers JSON file (`.mcp.json`) one of them names, or `--mcp` on the command line. A stdio
 * server starts in the folder of the file that declares it unless it sets `cwd:`.
 */
import { dirname, resolve } from 'node:path';
import type { Diagnostic, SourceLocation } from '../../contract/errors.js';
import { mcpServerDefaults } from '../../config/defaults.js';
import type { McpServerYaml, McpServersYaml } from '../../config/schema-types.generated.js';
import { locate, locateKey, type YamlSource } from '../../config/yaml-source.js';
import { readMcpJsonFile } from './mcp-json-file.js';
import type { McpServerConfig, McpServerOrigin, McpTransportConfig } from '../../config/types.js';

export type { McpEnvironmentValue, McpServerConfig, McpServerOrigin, McpTransportConfig } from '../../config/types.js';

/** Servers declared by the user (their config, `--mcp`) or the package: they run on the host. */
export function isTrustedServer(server: McpServerConfig): boolean {
  return server.origin !== 'project';
}

/** Reads the `mcp_servers:` mapping of a YAML file the schema has accepted. */
export function readMcpServers(
  source: YamlSource,
  path: ReadonlyArray<string>,
  raw: McpServersYaml | undefined,
  origin: McpServerOrigin,
  diagnostics: Diagnostic[],
): McpServerConfig[] {
  if (!raw) return [];
  const folder = dirname(source.file);
  const servers: McpServerConfig[] = [];
  for (const [name, value] of Object.entries(raw)) {
    if (name === 'file') {
      const file = resolve(folder, value as string);
      const read = readMcpJsonFile(file, locate(source, [...path, 'file']));
      diagnostics.push(...read.diagnostics);
      servers.push(...read.servers.map((server) => toServerConfig(server.name, server.yaml, { declaredIn: file, origin, location: server.location }, diagnostics)));
      continue;
    }
    const location = locateKey(source, path, name);
    servers.push(toServerConfig(name, value as McpServerYaml, { declaredIn: source.file, origin, location }, diagnostics));
  }
  return servers;
}

/** A server written as YAML (or converted from .mcp.json), with its defaults filled in. */
export function toServerConfig(
  name: string,
  raw: McpServerYaml,
  where: { declaredIn: string; origin: McpServerOrigin; location?: SourceLocation },
  diagnostics: Diagnostic[],
): McpServerConfig {
  const folder = dirname(where.declaredIn);
  if (!/^[A-Za-z0-9_.-]+$/.test(name)) {
    diagnostics.push({ severity: 'error', message: `MCP server name '${name}' may hold only letters, digits, '_', '-' and '.'`, location: where.location });
  }
  if ((raw.command === undefined) === (raw.url === undefined)) {
    diagnostics.push({
      severity: 'error',
      message: `MCP server '${name}' needs either command: (a program spoken to over stdio) or url: (an HTTP endpoint)${raw.command !== undefined ? ', not both' : ''}`,
      location: where.location,
    });
  }
  const transport: McpTransportConfig = raw.url !== undefined
    ? { kind: 'http', url: raw.url, headers: Object.fromEntries(Object.entries(raw.headers_env ?? {}).map(([header, variable]) => [header, { env: variable }])) }
    : { kind: 'stdio', command: raw.command ?? '', args: raw.args ?? [], env: raw.env ?? {}, cwd: resolve(folder, raw.cwd ?? '.') };
  return {
    name,
    transport,
    tools: { allow: raw.tools?.allow, deny: raw.tools?.deny ?? [] },
    required: raw.required ?? mcpServerDefaults.required,
    startupTimeoutSeconds: raw.startup_timeout_seconds ?? mcpServerDefaults.startup_timeout_seconds,
    callTimeoutSeconds: raw.call_timeout_seconds ?? mcpServerDefaults.call_timeout_seconds,
    maxResultBytes: Math.round((raw.max_result_mb ?? mcpServerDefaults.max_result_mb) * 1024 * 1024),
    declaredIn: where.declaredIn,
    origin: where.origin,
    location: where.location,
  };
}

/** Later declarations of a name replace earlier ones, as later agents files replace agents. */
export function mergeMcpServers(...lists: McpServerConfig[][]): McpServerConfig[] {
  const byName = new Map<string, McpServerConfig>();
  for (const server of lists.flat()) byName.set(server.name, server);
  return [...byName.values()];
}

/** The user's variables a server reads: they are passed on, and hidden in every sink. */
export function environmentVariablesOf(server: McpServerConfig): string[] {
  const values = server.transport.kind === 'stdio' ? Object.values(server.transport.env) : Object.values(server.transport.headers);
  return values.flatMap((value) => (typeof value === 'string' ? [] : [value.env]));
}
