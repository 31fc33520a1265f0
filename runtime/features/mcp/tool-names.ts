/**
 * How an MCP server's tools are named to the model: `mcp_<server>_<tool>`, with characters
 * outside [A-Za-z0-9_-] replaced and long names cut to the providers' 64-character limit with a
 * short hash, so that two tools never share a name. An agent names one tool, or `mcp_<server>_*`.
 */
import { createHash } from 'node:crypto';

export const mcpToolPrefix = 'mcp_';
const nameLimit = 64;
const hashLength = 8;

function sanitize(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, '_');
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, hashLength);
}

/** The prefix every tool of a server has. */
export function serverPrefix(server: string): string {
  return `${mcpToolPrefix}${sanitize(server)}_`;
}

/**
 * The model-facing name of each of a server's tools, in order. Names that would be too long, or
 * that replacing characters made equal to another, end in a hash of the original name.
 */
export function modelToolNames(server: string, tools: readonly string[]): Map<string, string> {
  const names = new Map<string, string>();
  const taken = new Set<string>();
  for (const tool of tools) {
    let name = `${serverPrefix(server)}${sanitize(tool)}`;
    if (name.length > nameLimit || taken.has(name)) {
      name = `${name.slice(0, nameLimit - hashLength - 1)}_${shortHash(`${server}/${tool}`)}`;
    }
    taken.add(name);
    names.set(tool, name);
  }
  return names;
}

export function isWildcard(name: string): boolean {
  return name.endsWith('_*');
}

/**
 * Every declared server whose tools a name could be: `mcp_corp_vault_read` is the tool `read` of
 * `corp_vault` and the tool `vault_read` of `corp`. More than one is an error, never a silent pick.
 */
export function serversOfToolName(name: string, servers: readonly string[]): string[] {
  if (!name.startsWith(mcpToolPrefix)) return [];
  const bare = isWildcard(name) ? name.slice(0, -1) : name;
  return servers.filter((server) => {
    const prefix = serverPrefix(server);
    return bare.startsWith(prefix) && (bare.length > prefix.length || isWildcard(name));
  });
}

/** The server an agent's tool name refers to: the declared server with the longest matching prefix. */
export function serverOfToolName(name: string, servers: readonly string[]): string | undefined {
  if (!name.startsWith(mcpToolPrefix)) return undefined;
  const bare = isWildcard(name) ? name.slice(0, -1) : name;
  let best: string | undefined;
  for (const server of servers) {
    const prefix = serverPrefix(server);
    if (bare.startsWith(prefix) && (bare.length > prefix.length || isWildcard(name)) && (!best || prefix.length > serverPrefix(best).length)) best = server;
  }
  return best;
}
