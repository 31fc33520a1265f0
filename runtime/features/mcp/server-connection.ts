/**
 * One MCP server for the length of a run: connected with a start-up time limit, its tools listed
 * and kept current (`notifications/tools/list_changed`), calls limited in time and cancelled when
 * they run over, and a server that exits by itself restarted once, after a pause. A second loss,
 * or a restart that fails, leaves it lost; the owner decides what that means for the run.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { setTimeout as delay } from 'node:timers/promises';
import { ToolError } from '../../contract/errors.js';
import type { McpServerConfig } from './server-config.js';

/** A client connected to the server, and what it can tell about a later failure (the server's stderr). */
export interface ConnectedClient {
  client: Client;
  /** Where the server runs, for the record: host, bwrap, docker, streamable-http or sse. */
  place: string;
  describeFailure?: () => string;
}

export interface ServerConnectionOptions {
  /**
   * Connects clients made with `makeClient` (one per transport tried) to a new transport: a new
   * process for stdio servers. Called again for a restart.
   */
  connect(makeClient: () => Client, timeoutMs: number): Promise<ConnectedClient>;
  onToolsChanged(tools: Tool[]): void;
  onRestart(reason: string): void;
  onLost(reason: string): void;
  /** Pause before the restart of a crashed server. */
  restartDelayMs?: number;
}

const defaultRestartDelayMs = 500;
const clientInfo = { name: 'manus-runtime', version: '0.1.0' };

export class McpServerConnection {
  tools: Tool[] = [];
  place = '';
  private client?: Client;
  private connected?: ConnectedClient;
  private closing = false;
  private restarts = 0;
  /** Settles when the server is usable again after a crash; calls wait for it. */
  private restarting?: Promise<void>;
  private lostReason?: string;
  /** A refresh of the tool list the server asked for; a call that caused it ends when it is done. */
  private refreshing?: Promise<void>;

  constructor(
    readonly config: McpServerConfig,
    private readonly options: ServerConnectionOptions,
  ) {}

  /** Connects and lists the tools, or fails naming the server and why, within its start-up time. */
  async start(): Promise<void> {
    const limitMs = this.config.startupTimeoutSeconds * 1000;
    const clients: Client[] = [];
    let connected: ConnectedClient | undefined;
    const attempt = (async () => {
      connected = await this.options.connect(() => {
        const client = this.newClient();
        clients.push(client);
        return client;
      }, limitMs);
      const listed = await connected.client.listTools(undefined, { timeout: limitMs });
      return listed.tools;
    })();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`it did not answer within ${this.config.startupTimeoutSeconds} s (startup_timeout_seconds)`)), limitMs);
    });
    try {
      this.tools = await Promise.race([attempt, timeout]);
    } catch (error) {
      attempt.catch(() => undefined);
      // Whatever was started for this attempt ends with it, a server still starting included.
      await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
      const detail = connected?.describeFailure?.();
      throw new Error(`${errorText(error)}${detail ? `; it wrote: ${detail}` : ''}`);
    } finally {
      clearTimeout(timer);
    }
    const { client } = connected!;
    this.client = client;
    this.connected = connected;
    this.place = connected!.place;
    client.onclose = () => this.closedByServer(client);
  }

  get lost(): string | undefined {
    return this.lostReason;
  }

  async callTool(name: string, input: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    if (this.restarting) await this.restarting;
    const client = this.client;
    if (this.lostReason || !client) throw new ToolError(`the MCP server '${this.config.name}' is no longer running: ${this.lostReason ?? 'it was closed'}`, 'mcp_server_lost');
    try {
      const result = await client.callTool({ name, arguments: input }, CallToolResultSchema, { timeout: this.config.callTimeoutSeconds * 1000, signal }) as CallToolResult;
      // A server sends list_changed before the result of the call that changed it: the model's next request sees the new list.
      await this.refreshing;
      return result;
    } catch (error) {
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        throw new ToolError(`the call to '${name}' on the MCP server '${this.config.name}' took longer than ${this.config.callTimeoutSeconds} s (call_timeout_seconds) and was cancelled`, 'mcp_call_timeout');
      }
      if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
        throw new ToolError(`the MCP server '${this.config.name}' exited during the call to '${name}'${this.describeExit()}`, 'mcp_server_exited');
      }
      throw error;
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.restarting?.catch(() => undefined);
    await this.client?.close().catch(() => undefined);
  }

  private newClient(): Client {
    const client = new Client(clientInfo, { capabilities: { sampling: {}, elicitation: {}, roots: {} } });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (client !== this.client) return;
      const refresh = client.listTools(undefined, { timeout: this.config.callTimeoutSeconds * 1000 }).then((listed) => {
        if (client !== this.client) return;
        this.tools = listed.tools;
        this.options.onToolsChanged(listed.tools);
      }, () => undefined);
      this.refreshing = refresh;
      void refresh.finally(() => {
        if (this.refreshing === refresh) this.refreshing = undefined;
      });
    });
    return client;
  }

  private describeExit(): string {
    const detail = this.connected?.describeFailure?.();
    return detail ? `; it wrote: ${detail}` : '';
  }

  /** The server went away by itself: restart it once, after a pause; after that it is lost. */
  private closedByServer(client: Client): void {
    if (this.closing || client !== this.client) return;
    const reason = `it exited unexpectedly${this.describeExit()}`;
    if (this.restarts >= 1) {
      this.lose(`${reason}, again after a restart`);
      return;
    }
    this.restarts += 1;
    this.options.onRestart(reason);
    this.restarting = (async () => {
      await delay(this.options.restartDelayMs ?? defaultRestartDelayMs);
      if (this.closing) return;
      try {
        await this.start();
        this.options.onToolsChanged(this.tools);
      } catch (error) {
        this.lose(`${reason}, and the restart failed: ${(error as Error).message}`);
      }
    })().finally(() => {
      this.restarting = undefined;
    });
  }

  private lose(reason: string): void {
    this.lostReason = reason;
    this.client = undefined;
    this.options.onLost(reason);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
