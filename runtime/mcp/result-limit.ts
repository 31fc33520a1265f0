/**
 * A cap on what one message from an MCP server may weigh. A server that answers a call with more
 * than `max_result_mb` is cut off while the bytes arrive, not after they have all been buffered
 * and parsed: the rest of the message is skipped, and the call it answers gets an error result
 * at once, saying so. The connection stays usable for the next call.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

type RequestId = string | number;

/** How much of the start and end of a cut message is kept, to find the id of the request it answers. */
export const keptEdgeBytes = 256;

/** The answer the client gets in place of a message that was too large: an error result for a tool call. */
export function oversizedReply(id: RequestId, method: string | undefined, server: string, limitBytes: number): JSONRPCMessage {
  const megabytes = Math.round((limitBytes / (1024 * 1024)) * 100) / 100;
  const text = `the MCP server '${server}' answered with more than ${megabytes} MB (max_result_mb), so its reply was cut off while it was read and dropped; ask for less (a smaller range, a filter, a page)`;
  if (method === 'tools/call') return { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }], isError: true } };
  return { jsonrpc: '2.0', id, error: { code: -32603, message: text } };
}

const idValue = String.raw`("(?:[^"\\]|\\.)*"|-?\d+)`;
// Servers built on the SDK write `{"result":...,"jsonrpc":"2.0","id":N}`; others often start with the id.
const idAtEnd = new RegExp(String.raw`"id"\s*:\s*${idValue}\s*\}\s*$`);
const idAtStart = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${idValue}`);

/**
 * The id of the request a cut message answers, from its kept start and end, or, failing that, the
 * only request still waiting for an answer.
 */
export function idOfCutMessage(head: string, tail: string, pending: ReadonlyMap<RequestId, string>): RequestId | undefined {
  const match = idAtEnd.exec(tail) ?? idAtStart.exec(head);
  if (match) {
    const id: RequestId = match[1].startsWith('"') ? (JSON.parse(match[1]) as string) : Number(match[1]);
    if (pending.has(id)) return id;
  }
  return pending.size === 1 ? [...pending.keys()][0] : undefined;
}

/** Requests sent and not yet answered, by id, with their methods: what a cut message may answer. */
export class PendingRequests extends Map<RequestId, string> {
  sent(message: JSONRPCMessage): void {
    if ('method' in message && 'id' in message && message.id !== undefined) this.set(message.id, message.method);
  }

  received(message: JSONRPCMessage): void {
    if (!('method' in message) && 'id' in message && message.id !== undefined) this.delete(message.id);
  }
}
