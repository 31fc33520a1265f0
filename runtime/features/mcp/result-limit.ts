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

type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * The fetch of an HTTP MCP server with the same cap: a JSON reply is read up to the limit, an event
 * stream is passed on event by event, each held until it is whole; a reply or event over the limit
 * is dropped as it arrives and replaced by the error reply for the request it answers.
 */
export function limitedFetch(base: FetchLike, limit: { server: string; maxBytes: number }): FetchLike {
  const pending = new PendingRequests();
  return async (url, init) => {
    const sent = requestOf(init?.body);
    if (sent) pending.sent(sent);
    const response = await base(url, init);
    if (!response.body) return response;
    const type = response.headers.get('content-type')?.split(';')[0].trim().toLowerCase() ?? '';
    const replyFor = (head: string, tail: string) => {
      const id = idOfCutMessage(head, tail, sent && 'id' in sent ? new Map([[sent.id, sent.method]]) : pending);
      return id === undefined ? undefined : oversizedReply(id, pending.get(id) ?? (sent as { method?: string } | undefined)?.method, limit.server, limit.maxBytes);
    };
    if (type === 'application/json') return cappedJson(response, limit.maxBytes, replyFor);
    if (type === 'text/event-stream') return new Response(cappedEvents(response.body, limit.maxBytes, replyFor), response);
    return response;
  };
}

function requestOf(body: unknown): (JSONRPCMessage & { method: string; id: RequestId }) | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const message = JSON.parse(body) as Record<string, unknown>;
    return typeof message.method === 'string' && (typeof message.id === 'string' || typeof message.id === 'number') ? (message as never) : undefined;
  } catch {
    return undefined;
  }
}

type ReplyFor = (head: string, tail: string) => JSONRPCMessage | undefined;

async function cappedJson(response: Response, maxBytes: number, replyFor: ReplyFor): Promise<Response> {
  const reader = response.body!.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return new Response(Buffer.concat(chunks, length), response);
    chunks.push(value);
    length += value.byteLength;
    if (length > maxBytes) {
      await reader.cancel();
      const head = Buffer.concat(chunks, length).subarray(0, keptEdgeBytes).toString('utf8');
      const reply = replyFor(head, '');
      if (!reply) throw new Error(`the reply was larger than max_result_mb (${maxBytes} bytes) and was dropped`);
      return new Response(JSON.stringify(reply), { status: response.status, headers: { 'content-type': 'application/json' } });
    }
  }
}

/** Passes each server-sent event on once it is whole; one over the limit becomes the error reply. */
function cappedEvents(body: ReadableStream<Uint8Array>, maxBytes: number, replyFor: ReplyFor): ReadableStream<Uint8Array> {
  let event: Buffer[] = [];
  let eventBytes = 0;
  let cut: { head: Buffer; tail: Buffer } | undefined;
  let lineEmpty = true;
  const encoder = new TextEncoder();
  const endEvent = (controller: TransformStreamDefaultController<Uint8Array>) => {
    if (cut) {
      const head = cut.head.toString('utf8');
      const reply = replyFor(head.slice(Math.max(0, head.indexOf('{'))), cut.tail.toString('utf8'));
      cut = undefined;
      if (reply) controller.enqueue(encoder.encode(`event: message\ndata: ${JSON.stringify(reply)}\n\n`));
    } else if (eventBytes > 0) {
      controller.enqueue(Buffer.concat(event, eventBytes));
    }
    event = [];
    eventBytes = 0;
  };
  const take = (part: Buffer) => {
    if (part.length === 0) return;
    if (cut) {
      cut.tail = Buffer.concat([cut.tail, part]).subarray(-keptEdgeBytes);
      return;
    }
    event.push(part);
    eventBytes += part.length;
    if (eventBytes <= maxBytes) return;
    const whole = Buffer.concat(event, eventBytes);
    cut = { head: whole.subarray(0, keptEdgeBytes), tail: Buffer.from(whole.subarray(-keptEdgeBytes)) };
    event = [];
    eventBytes = 0;
  };
  return body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      let start = 0;
      for (let index = 0; index < bytes.length; index++) {
        const byte = bytes[index];
        if (byte === 0x0d) continue;
        if (byte !== 0x0a) {
          lineEmpty = false;
          continue;
        }
        // A blank line ends an event.
        if (lineEmpty) {
          take(bytes.subarray(start, index + 1));
          start = index + 1;
          endEvent(controller);
        }
        lineEmpty = true;
      }
      take(bytes.subarray(start));
    },
    flush(controller) {
      endEvent(controller);
    },
  }));
}
