/**
 * The MCP server of one connection: lists the served tools and answers calls. An unknown tool is a
 * JSON-RPC error (-32602, invalid params); arguments that break the schema and failures inside a
 * tool are `isError` results, which reach the model so it can correct itself. Closing it cancels
 * the calls still running, waits for them (a recipe run records its interruption) and disposes what
 * the connection's tools started.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { validateToolArguments } from '../../kernel/tool-arguments.js';
import { errorContent } from './result-content.js';
import type { ServedTool } from './served-tool.js';
import type { ToolSession } from './tool-session.js';

export interface ConnectionServer {
  server: Server;
  /** Cancels running calls, waits for them to end and disposes the session's resources. */
  close(): Promise<void>;
}

export function createConnectionServer(tools: readonly ServedTool[], options: { version: string; newSession: () => ToolSession }): ConnectionServer {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const server = new Server({ name: 'manus', version: options.version }, { capabilities: { tools: {} } });
  const running = new Set<Promise<unknown>>();
  let session: ToolSession | undefined;

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema as { type: 'object' },
      ...(tool.outputSchema ? { outputSchema: tool.outputSchema as { type: 'object' } } : {}),
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, (request, extra): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found; tools: ${[...byName.keys()].join(', ')}`);
    const input = structuredClone(request.params.arguments ?? {});
    const problems = validateToolArguments({ parameters: tool.inputSchema }, input);
    if (problems.length > 0) {
      return Promise.resolve(errorContent(`Invalid arguments for '${tool.name}': ${problems.join('; ')}. Input schema: ${JSON.stringify(tool.inputSchema)}`));
    }
    const progressToken = extra._meta?.progressToken;
    const call = tool.call(input, {
      signal: extra.signal,
      progress: (progress, total, message) => {
        if (progressToken === undefined) return;
        extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total, message } }).catch(() => undefined);
      },
      session: () => (session ??= options.newSession()),
    });
    running.add(call);
    void call.finally(() => running.delete(call)).catch(() => undefined);
    return call;
  });

  return {
    server,
    async close() {
      // Closing the protocol aborts every running call's signal.
      await server.close().catch(() => undefined);
      await Promise.allSettled([...running]);
      await session?.dispose();
    },
  };
}
