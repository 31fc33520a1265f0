/**
 * The MCP servers of one run: those the agent's tools refer to (and those the user added with
 * `--mcp`) start together before the first model request, as per-run resources the run disposes
 * however it ends. Their tools join the run's toolbox and follow the servers' changes. A server
 * that cannot start, or is lost, stops the run when it is `required` (exit code 6), or when the
 * agent names any of its tools one by one: an agent that names a tool cannot do without it.
 * Otherwise (the agent takes `mcp_<server>_*`, whatever there is) the run goes on without it, with
 * a warning.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AgentConfig } from '../../config/types.js';
import type { ChatModel } from '../../contract/model-types.js';
import type { UsageLedger } from '../../services/model/usage-ledger.js';
import type { Toolbox } from '../../kernel/toolbox.js';
import type { HumanChannel, RunResources, TraceWriter } from '../../contract/tool.js';
import type { FetchFunction } from '../../contract/tool-network.js';
import { ConfigError, formatLocation, type Diagnostic } from '../../contract/errors.js';
import type { NetworkAccess } from '../../services/network/guarded-lookup.js';
import { launchStdioServer, resolveEnvironment, type LaunchServices } from './launch-place.js';
import { McpServerUnavailableError } from './mcp-errors.js';
import { mcpTool, offeredTools } from './mcp-tools.js';
import { environmentVariablesOf, isTrustedServer, type McpServerConfig } from './server-config.js';
import { guardedFetch } from '../../services/network/guarded-fetch.js';
import { HostNotAllowedError, PrivateAddressError } from '../../services/network/network-errors.js';
import { McpServerConnection, type ConnectedClient } from './server-connection.js';
import { answerServerRequests } from './server-requests.js';
import { SessionTransport } from './session-transport.js';
import { limitedFetch } from './result-limit.js';
import { isWildcard, modelToolNames, serverOfToolName, serverPrefix } from './tool-names.js';

export interface RunServerServices extends LaunchServices {
  toolbox: Toolbox;
  resources: RunResources;
  trace: TraceWriter;
  model: ChatModel;
  human: HumanChannel;
  signal: AbortSignal;
  usage: UsageLedger;
  agent: Pick<AgentConfig, 'name' | 'toolLocations' | 'location'>;
  /** Ends the run with this error (a required server was lost). */
  failRun(error: Error): void;
  /** What the user allows the HTTP connections of servers a recipe declared to reach. */
  networkAccess: NetworkAccess;
  /** The run's fetch, held to its allowed hosts, when it has a list: used for the servers a recipe declared. */
  egressFetch?: FetchFunction;
  /** The fetch of the user's own servers when the user's `network.only` holds them; the plain fetch otherwise. */
  userFetch?: FetchFunction;
}

/** Which server gave each MCP tool name in the toolbox, to name both sides of a collision. */
type ToolOwners = Map<string, McpServerConfig>;

/** The servers a run needs, each with the agent's names for its tools. */
export function serversNeeded(servers: readonly McpServerConfig[], agentToolNames: readonly string[]): Map<McpServerConfig, string[]> {
  const byName = new Map(servers.map((server) => [server.name, server]));
  const needed = new Map<McpServerConfig, string[]>();
  for (const name of agentToolNames) {
    const server = byName.get(serverOfToolName(name, [...byName.keys()]) ?? '');
    if (server) needed.set(server, [...(needed.get(server) ?? []), name]);
  }
  for (const server of servers) {
    if (server.origin === 'command-line' && !needed.has(server)) needed.set(server, [`${serverPrefix(server.name)}*`]);
  }
  return needed;
}

export async function startRunServers(servers: readonly McpServerConfig[], agentToolNames: readonly string[], services: RunServerServices): Promise<void> {
  const needed = serversNeeded(servers, agentToolNames);
  const missing = [...needed.keys()].flatMap((server) => missingVariables(server, services.environment));
  if (missing.length > 0) throw new ConfigError(missing);
  const owners: ToolOwners = new Map();
  const started = await Promise.allSettled([...needed].map(([server, names]) => startServer(server, names, services, owners)));
  const failures: string[] = [];
  const unknownTools: Diagnostic[] = [];
  started.forEach((outcome, index) => {
    const [server] = [...needed][index];
    if (outcome.status === 'fulfilled') {
      unknownTools.push(...outcome.value);
      return;
    }
    const reason = outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason);
    const required = isRequired(server, needed.get(server)!);
    services.trace.emit('mcp-server-failed', { server: server.name, required, reason });
    if (required) failures.push(`the MCP server '${server.name}' could not be started: ${reason}`);
    else services.trace.emit('run-warning', { message: `the MCP server '${server.name}' could not be started, so the run goes on without its tools: ${reason}` });
  });
  if (failures.length > 0) throw new McpServerUnavailableError(failures.join('\n'));
  if (unknownTools.length > 0) throw new ConfigError(unknownTools);
}

/** Required by its declaration, or by an agent that names any of its tools one by one. */
function isRequired(server: McpServerConfig, agentNames: readonly string[]): boolean {
  return server.required || agentNames.some((name) => !isWildcard(name));
}

/** Variables a server takes from the user's environment that are not set: all of them, before anything starts. */
function missingVariables(server: McpServerConfig, environment: Record<string, string | undefined>): Diagnostic[] {
  const missing = environmentVariablesOf(server).filter((name) => environment[name] === undefined);
  if (missing.length === 0) return [];
  return [{ severity: 'error', message: `the MCP server '${server.name}' needs environment variables that are not set: ${missing.join(', ')}`, location: server.location }];
}

/** Starts one server and adds its tools; returns the agent's names the server does not have. */
async function startServer(server: McpServerConfig, agentNames: string[], services: RunServerServices, owners: ToolOwners): Promise<Diagnostic[]> {
  let offered = new Map<string, string>();
  const collisions: Diagnostic[] = [];
  const connection = await services.resources.get(
    `mcp-server:${server.name}`,
    async () => {
      const created = new McpServerConnection(server, {
        connect: (makeClient, timeoutMs) => connectServer(server, services, (workspacePath) => {
          const client = makeClient();
          answerServerRequests(client, {
            server: server.name,
            workspacePath,
            samplingGranted: services.trustGrants.has('sampling'),
            model: services.model,
            human: services.human,
            trace: services.trace,
            signal: services.signal,
            addUsage: (usage) => services.usage.add(usage),
          });
          return client;
        }, timeoutMs),
        onToolsChanged: (tools) => {
          // Mid-run, a colliding tool is left out with a warning: the run is already under way.
          offered = updateToolbox(created, tools, agentNames, offered, services, owners, (collision) => services.trace.emit('run-warning', { message: `${collision.message}; it is left out` }));
          services.trace.emit('mcp-tools-changed', { server: server.name, tools: [...offered.values()] });
        },
        onRestart: (reason) => services.trace.emit('mcp-server-restart', { server: server.name, reason }),
        onLost: (reason) => {
          const required = isRequired(server, agentNames);
          services.trace.emit('mcp-server-lost', { server: server.name, required, reason });
          const message = `the MCP server '${server.name}' was lost: ${reason}`;
          if (required) services.failRun(new McpServerUnavailableError(message));
          else services.trace.emit('run-warning', { message: `${message}; the run goes on without it` });
        },
      });
      await created.start();
      return created;
    },
    (created) => created.close(),
  );
  offered = updateToolbox(connection, connection.tools, agentNames, offered, services, owners, (collision) => collisions.push(collision));
  services.trace.emit('mcp-server-ready', { server: server.name, place: connection.place, tools: [...offered.values()] });
  return [...collisions, ...unknownNames(server, connection.tools, agentNames, services.agent)];
}

/**
 * Puts the server's offered tools that the agent names into the toolbox, and takes out those that
 * went away. A name the toolbox already holds from another source is a collision, reported with
 * both sources, and never replaces that tool.
 */
function updateToolbox(
  connection: McpServerConnection,
  tools: Tool[],
  agentNames: string[],
  previous: Map<string, string>,
  services: RunServerServices,
  owners: ToolOwners,
  onCollision: (collision: Diagnostic) => void,
): Map<string, string> {
  const available = offeredTools(tools, connection.config.tools);
  const names = modelToolNames(connection.config.name, available.map((tool) => tool.name));
  const wanted = new Set(agentNames);
  const all = agentNames.some(isWildcard);
  const current = new Map<string, string>();
  for (const tool of available) {
    const name = names.get(tool.name)!;
    if (!all && !wanted.has(name)) continue;
    const owner = owners.get(name);
    if ((owner && owner !== connection.config) || (!owner && services.toolbox.has(name))) {
      onCollision({
        severity: 'error',
        message: `the tool name '${name}' comes from both ${owner ? describeServer(owner) : 'a plugin, pack or agent tool of the run'} and ${describeServer(connection.config)} (its tool '${tool.name}')`,
        location: connection.config.location,
      });
      continue;
    }
    owners.set(name, connection.config);
    current.set(tool.name, name);
    services.toolbox.set(name, mcpTool(connection, tool, name));
  }
  for (const [tool, name] of previous) {
    if (current.has(tool)) continue;
    services.toolbox.delete(name);
    owners.delete(name);
  }
  return current;
}

function describeServer(server: McpServerConfig): string {
  return `the MCP server '${server.name}' (declared in ${formatLocation(server.location ?? { file: server.declaredIn })})`;
}

/** An agent's name for a tool the server does not offer is an error that lists what it does offer. */
function unknownNames(server: McpServerConfig, tools: Tool[], agentNames: string[], agent: RunServerServices['agent']): Diagnostic[] {
  const available = [...modelToolNames(server.name, offeredTools(tools, server.tools).map((tool) => tool.name)).values()];
  return agentNames.filter((name) => !isWildcard(name) && !available.includes(name)).map((name) => ({
    severity: 'error' as const,
    message: `agent '${agent.name}' lists the tool '${name}', which the MCP server '${server.name}' does not offer; it offers: ${available.join(', ') || 'no tools'}`,
    location: agent.toolLocations[name] ?? agent.location ?? server.location,
  }));
}

/** Connects a new client, made for the place the server runs in (the workspace path it is offered depends on it). */
async function connectServer(server: McpServerConfig, services: RunServerServices, makeClient: (workspacePath: string) => Client, timeoutMs: number): Promise<ConnectedClient> {
  if (server.transport.kind === 'stdio') {
    const launched = await launchStdioServer(server, services);
    const transport = new SessionTransport(launched.session, { server: server.name, maxBytes: server.maxResultBytes });
    const client = makeClient(launched.workspacePath);
    try {
      await client.connect(transport, { timeout: timeoutMs });
    } catch (error) {
      const detail = await transport.stderrAfterExit();
      throw new Error(`${(error as Error).message}${detail ? `; it wrote: ${detail}` : ''}`);
    }
    return { client, place: launched.place, describeFailure: () => transport.stderr };
  }
  const url = new URL(server.transport.url);
  const headers = resolveEnvironment(server.name, server.transport.headers, services.environment);
  // The user's own servers may be anywhere the user's network.only allows; one a recipe names
  // reaches only what the user allows,
  // checked for the address each connection really uses, redirects included.
  const fetch = limitedFetch(isTrustedServer(server) ? (services.userFetch ?? globalThis.fetch) : (services.egressFetch ?? guardedFetch(services.networkAccess)), { server: server.name, maxBytes: server.maxResultBytes });
  const streamable = makeClient(services.workspace);
  try {
    await streamable.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers }, fetch }), { timeout: timeoutMs });
    return { client: streamable, place: 'streamable-http' };
  } catch (streamableError) {
    // Servers from before Streamable HTTP speak the older HTTP+SSE transport at the same address.
    const sse = makeClient(services.workspace);
    try {
      await sse.connect(new SSEClientTransport(url, { requestInit: { headers }, fetch }), { timeout: timeoutMs });
      return { client: sse, place: 'sse' };
    } catch (sseError) {
      if (PrivateAddressError.isInstance(sseError) || HostNotAllowedError.isInstance(sseError)) throw sseError;
      throw streamableError;
    }
  }
}
