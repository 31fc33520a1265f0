/**
 * A server's tools as the kernel's tools: each calls the server and turns its reply into a tool
 * result. Input schemas are taken as the server gives them, without `$schema` and `$id`, which
 * name drafts and identifiers that mean nothing to the runtime's validator.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { defineTool, type AnyToolDefinition, type JsonSchema } from '../../contract/tool.js';
import type { McpServerConnection } from './server-connection.js';
import { toToolResult } from './tool-results.js';

export function mcpTool(connection: McpServerConnection, tool: Tool, modelName: string): AnyToolDefinition {
  const { $schema: _schema, $id: _id, ...parameters } = tool.inputSchema as JsonSchema;
  return defineTool<Record<string, unknown>>({
    name: modelName,
    description: tool.description ?? tool.title ?? `The tool '${tool.name}' of the MCP server '${connection.config.name}'.`,
    parameters: { ...parameters, type: 'object', properties: (parameters.properties as JsonSchema | undefined) ?? {} },
    async execute(input, context) {
      return toToolResult(await connection.callTool(tool.name, input, context.signal));
    },
  });
}

/** The server's tools that its `tools: {allow, deny}` offer. */
export function offeredTools(tools: readonly Tool[], filter: { allow?: string[]; deny: string[] }): Tool[] {
  return tools.filter((tool) => (!filter.allow || filter.allow.includes(tool.name)) && !filter.deny.includes(tool.name));
}
