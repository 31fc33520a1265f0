/**
 * The `mcpServers` JSON format that desktop clients and `.mcp.json` files use, read into the same
 * shape as `mcp_servers:` in YAML. A value written as `${NAME}` passes the user's variable NAME.
 */
import { readFileSync } from 'node:fs';
import type { Diagnostic, SourceLocation } from '../../contract/errors.js';
import { didYouMean } from '../../contract/did-you-mean.js';
import type { EnvironmentReferenceYaml, McpServerYaml } from '../../config/schema-types.generated.js';

export interface McpJsonServer {
  name: string;
  yaml: McpServerYaml;
  location: SourceLocation;
}

const knownKeys = ['command', 'args', 'env', 'cwd', 'url', 'type', 'headers'];
const variableReference = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

export function readMcpJsonFile(file: string, referencedAt: SourceLocation): { servers: McpJsonServer[]; diagnostics: Diagnostic[] } {
  let text: string;
  let data: unknown;
  try {
    text = readFileSync(file, 'utf8');
    data = JSON.parse(text);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (error as Error).message;
    return { servers: [], diagnostics: [{ severity: 'error', message: `cannot read the MCP servers file ${file}: ${reason}`, location: referencedAt }] };
  }
  const servers = isRecord(data) && isRecord(data.mcpServers) ? data.mcpServers : undefined;
  if (!servers) {
    return { servers: [], diagnostics: [{ severity: 'error', message: 'an MCP servers file needs an "mcpServers" object', location: { file, line: 1, column: 1 } }] };
  }
  const diagnostics: Diagnostic[] = [];
  const read: McpJsonServer[] = [];
  for (const [name, entry] of Object.entries(servers)) {
    const location = locateInJson(file, text, name);
    if (!isRecord(entry)) {
      diagnostics.push({ severity: 'error', message: `MCP server '${name}' must be an object`, location });
      continue;
    }
    const problem = (message: string) => diagnostics.push({ severity: 'error', message: `MCP server '${name}': ${message}`, location });
    for (const key of Object.keys(entry)) {
      if (!knownKeys.includes(key)) problem(`unknown key '${key}'${didYouMean(key, knownKeys)}`);
    }
    const yaml: McpServerYaml = {};
    if (typeof entry.command === 'string') yaml.command = entry.command;
    if (Array.isArray(entry.args)) yaml.args = entry.args.map(String);
    if (typeof entry.cwd === 'string') yaml.cwd = entry.cwd;
    if (typeof entry.url === 'string') yaml.url = entry.url;
    if (isRecord(entry.env)) {
      yaml.env = Object.fromEntries(Object.entries(entry.env).map(([key, value]): [string, string | EnvironmentReferenceYaml] => {
        const reference = variableReference.exec(String(value));
        return [key, reference ? { env: reference[1] } : String(value)];
      }));
    }
    if (isRecord(entry.headers)) {
      yaml.headers_env = {};
      for (const [header, value] of Object.entries(entry.headers)) {
        const reference = variableReference.exec(String(value));
        if (reference) yaml.headers_env[header] = reference[1];
        // A credential written into the file would be sent as is and shown wherever the file is.
        else problem(`header '${header}' must be written as \${VARIABLE}, the name of an environment variable holding its whole value`);
      }
    }
    read.push({ name, yaml, location });
  }
  return { servers: read, diagnostics };
}

/** The line of a server's key in the JSON text, found by its quoted name. */
function locateInJson(file: string, text: string, name: string): SourceLocation {
  const offset = text.indexOf(JSON.stringify(name));
  if (offset < 0) return { file };
  const before = text.slice(0, offset);
  return { file, line: before.split('\n').length, column: offset - before.lastIndexOf('\n') };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}
