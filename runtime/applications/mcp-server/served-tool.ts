/**
 * What the server exposes: a tool with its schemas and a call that answers in MCP's terms. Tools
 * from plugins and recipes run as tools both take this shape, so the protocol side names neither.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchema } from '../../contract/tool.js';
import type { ToolSession } from './tool-session.js';

export interface ServedTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  /** Given only when every successful result carries `structuredContent` that matches it. */
  outputSchema?: JsonSchema;
  /** Called with arguments already checked against `inputSchema`. */
  call(input: Record<string, unknown>, call: ServedCall): Promise<CallToolResult>;
}

export interface ServedCall {
  /** Aborted when the client cancels the request or the connection ends. */
  signal: AbortSignal;
  /** Tells the client how far the call has got, when it asked to be told. */
  progress(progress: number, total: number | undefined, message: string): void;
  /** The connection's tool session, made on first use. */
  session(): ToolSession;
}
