/**
 * OpenManus's mcp.json servers as `mcp_servers:` entries. A stdio server keeps its command and
 * arguments and starts where OpenManus started it, in its project folder; an SSE or HTTP server
 * keeps its URL (the client tries Streamable HTTP, then SSE). Environment values and headers may
 * be credentials: they become variables, never values in the YAML.
 */
import { basename, dirname, relative } from 'node:path';
import type { SourceLocation } from '../../contract/errors.js';
import type { McpServerYaml } from '../../config/schema-types.generated.js';
import { isTable, type McpJsonSource } from './openmanus-files.js';
import { variableName, type ImportReport } from './import-findings.js';

export interface ImportedMcpServers {
  servers: Record<string, McpServerYaml>;
}

const serverKeys = ['type', 'url', 'command', 'args', 'env', 'headers'];

/** `outputFolder` is where the agents file goes: a stdio server's cwd is written relative to it. */
export function importMcpServers(source: McpJsonSource, outputFolder: string, report: ImportReport): ImportedMcpServers {
  const servers: Record<string, McpServerYaml> = {};
  // OpenManus starts its servers from its project folder, the parent of config/.
  const jsonFolder = dirname(source.file);
  const projectFolder = basename(jsonFolder) === 'config' ? dirname(jsonFolder) : jsonFolder;
  for (const [id, raw] of Object.entries(source.servers)) {
    const name = id.replace(/[^A-Za-z0-9_.-]+/g, '_');
    const setting = `mcpServers.${id}`;
    const location = source.locate(id);
    if (!isTable(raw)) {
      report.notMapped(setting, 'must be an object with type and url, or command and args', location);
      continue;
    }
    for (const key of Object.keys(raw)) {
      if (!serverKeys.includes(key)) report.notMapped(`${setting}.${key}`, 'not an mcp.json setting this import knows', location);
    }
    const type = typeof raw.type === 'string' ? raw.type.toLowerCase() : raw.url !== undefined ? 'sse' : 'stdio';
    if (type === 'stdio') {
      if (typeof raw.command !== 'string' || raw.command.trim() === '') {
        report.notMapped(setting, 'a stdio server needs a command', location);
        continue;
      }
      const server: McpServerYaml = { command: raw.command };
      if (raw.args !== undefined) {
        if (Array.isArray(raw.args) && raw.args.every((argument) => typeof argument === 'string')) server.args = raw.args as string[];
        else report.notMapped(`${setting}.args`, 'must be a list of strings', location);
      }
      const environment = importVariables(raw.env, `${setting}.env`, location, report, (variable) => variable);
      if (environment) server.env = Object.fromEntries(Object.entries(environment).map(([variable, from]) => [variable, { env: from }]));
      server.cwd = relative(outputFolder, projectFolder) || '.';
      if (raw.headers !== undefined) report.notMapped(`${setting}.headers`, 'headers are for servers reached by URL', location);
      servers[name] = server;
    } else if (type === 'sse' || type === 'http' || type === 'streamable-http' || type === 'streamable_http') {
      if (typeof raw.url !== 'string' || !URL.canParse(raw.url)) {
        report.notMapped(setting, 'a server reached by URL needs an absolute url', location);
        continue;
      }
      const server: McpServerYaml = { url: raw.url };
      const headers = importVariables(raw.headers, `${setting}.headers`, location, report, (header) => variableName('openmanus', 'mcp', id, header));
      if (headers) server.headers_env = headers;
      for (const key of ['command', 'args', 'env']) {
        if (raw[key] !== undefined) report.notMapped(`${setting}.${key}`, 'used only by stdio servers', location);
      }
      servers[name] = server;
    } else {
      report.notMapped(`${setting}.type`, `"${type}" is not a transport: use "stdio", "sse" or "http"`, location);
    }
  }
  return { servers };
}

/**
 * Each name of an `env` or `headers` object with the variable that will hold its value. A stdio
 * server's variable keeps its own name (GITHUB_TOKEN stays GITHUB_TOKEN); a header gets one made up.
 */
function importVariables(
  value: unknown,
  setting: string,
  location: SourceLocation,
  report: ImportReport,
  variableFor: (name: string) => string,
): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (!isTable(value)) {
    report.notMapped(setting, 'must be an object of names and values', location);
    return undefined;
  }
  const variables: Record<string, string> = {};
  for (const name of Object.keys(value)) {
    const variable = variableFor(name);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) {
      report.notMapped(`${setting}.${name}`, 'not a name an environment variable can have', location);
      continue;
    }
    variables[name] = variable;
    report.variable(variable, `${setting}.${name}`);
  }
  return Object.keys(variables).length > 0 ? variables : undefined;
}
