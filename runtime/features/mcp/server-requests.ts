/**
 * What a server may ask of the run. `sampling/createMessage` is answered with the run's model and
 * counted in its usage, only when the user granted `sampling`; `elicitation/create` goes to the
 * run's human channel and is declined when no one can answer; `roots/list` names the run's
 * workspace, as the server sees it, as the one folder it is meant to work in.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { pathToFileURL } from 'node:url';
import { CreateMessageRequestSchema, ElicitRequestSchema, ErrorCode, ListRootsRequestSchema, McpError, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { ChatModel, TokenUsage } from '../../contract/model-types.js';
import type { ChatContentPart, ChatMessage, HumanChannel, TraceWriter } from '../../contract/tool.js';

export interface ServerRequestServices {
  server: string;
  samplingGranted: boolean;
  model: ChatModel;
  human: HumanChannel;
  trace: TraceWriter;
  signal: AbortSignal;
  /** The run's workspace as the server sees it. */
  workspacePath: string;
  /** Adds what sampling spent to the run's usage and budgets. */
  addUsage(usage: TokenUsage): void;
}

type SamplingContent = { type: string; text?: string; data?: string; mimeType?: string };

export function answerServerRequests(client: Client, services: ServerRequestServices): void {
  client.setRequestHandler(ListRootsRequestSchema, () => ({
    roots: [{ uri: pathToFileURL(services.workspacePath).href, name: 'workspace' }],
  }));

  client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
    if (!services.samplingGranted) {
      services.trace.emit('mcp-sampling-refused', { server: services.server });
      throw new McpError(ErrorCode.InvalidRequest, 'sampling is not allowed in this run: the user has not granted it (--trust sampling)');
    }
    const messages: ChatMessage[] = [];
    if (request.params.systemPrompt) messages.push({ role: 'system', content: request.params.systemPrompt });
    for (const message of request.params.messages) {
      const parts = (Array.isArray(message.content) ? message.content : [message.content]) as SamplingContent[];
      const text = parts.filter((part) => part.type === 'text').map((part) => part.text ?? '').join('\n');
      if (message.role === 'assistant') {
        messages.push({ role: 'assistant', content: text });
        continue;
      }
      const images: ChatContentPart[] = parts
        .filter((part) => part.type === 'image' && part.data && part.mimeType)
        .map((part) => ({ type: 'image_url', image_url: { url: `data:${part.mimeType};base64,${part.data}` } }));
      messages.push({ role: 'user', content: images.length > 0 ? [{ type: 'text', text }, ...images] : text });
    }
    const reply = await services.model.complete({ messages, signal: AbortSignal.any([services.signal, extra.signal]) });
    if (reply.usage) services.addUsage(reply.usage);
    services.trace.emit('mcp-sampling', { server: services.server, messages: messages.length, usage: reply.usage });
    return { role: 'assistant', content: { type: 'text', text: reply.content ?? '' }, model: reply.model ?? 'unknown', stopReason: 'endTurn' };
  });

  client.setRequestHandler(ElicitRequestSchema, async (request, extra): Promise<ElicitResult> => {
    const params = request.params as { message: string; requestedSchema?: { properties?: Record<string, { type?: string }> } };
    const fields = Object.entries(params.requestedSchema?.properties ?? {});
    const question = fields.length > 1
      ? `${params.message} (the MCP server '${services.server}' asks; answer with JSON for: ${fields.map(([name]) => name).join(', ')}, or "decline")`
      : `${params.message} (the MCP server '${services.server}' asks; or answer "decline")`;
    let answer: string;
    try {
      answer = await services.human.ask(question, { signal: AbortSignal.any([services.signal, extra.signal]) });
    } catch {
      // No one to ask: the server is told no, and the run goes on.
      services.trace.emit('mcp-elicitation', { server: services.server, action: 'decline', reason: 'no one can answer' });
      return { action: 'decline' };
    }
    if (/^\s*(decline|no|cancel)\s*$/i.test(answer)) {
      services.trace.emit('mcp-elicitation', { server: services.server, action: 'decline' });
      return { action: 'decline' };
    }
    const content = elicitedContent(answer, fields);
    services.trace.emit('mcp-elicitation', { server: services.server, action: content ? 'accept' : 'decline' });
    return content ? { action: 'accept', content } : { action: 'decline' };
  });
}

/** One field takes the answer as it is (as a number or true/false when the field is one); several take JSON. */
function elicitedContent(answer: string, fields: Array<[string, { type?: string }]>): Record<string, string | number | boolean> | undefined {
  if (fields.length === 1) {
    const [name, schema] = fields[0];
    const text = answer.trim();
    if (schema.type === 'number' || schema.type === 'integer') return Number.isFinite(Number(text)) ? { [name]: Number(text) } : undefined;
    if (schema.type === 'boolean') return { [name]: /^(y|yes|true|1)$/i.test(text) };
    return { [name]: text };
  }
  try {
    const parsed = JSON.parse(answer) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, string | number | boolean>) : undefined;
  } catch {
    return undefined;
  }
}
