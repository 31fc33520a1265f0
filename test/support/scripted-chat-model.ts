import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatModel, ModelReply, ModelRequest, ToolSpecification } from '../../runtime/contract/model-types.js';
import type { ChatMessage, JsonSchema } from '../../runtime/contract/tool.js';

/**
 * A `ChatModel` that answers from a script, for running the loop in-process: each request takes
 * the next queued reply (or throws its error), and is recorded as the loop sent it, so a test can
 * say both what the model did and what it saw.
 */

export interface ScriptedCall {
  /** `call_<n>` in the order calls were scripted, unless given. */
  id?: string;
  name: string;
  /** An object is sent JSON-encoded; a string is sent verbatim, so malformed JSON can be scripted. */
  arguments: unknown;
}

export interface ScriptedReply {
  content?: string;
  toolCalls?: ScriptedCall[];
  reasoning?: string;
  /** `tool_calls` when the reply has calls, `stop` otherwise, unless given. */
  finishReason?: string | null;
  /**
   * What the provider reports spending; `null` reports nothing, so the loop counts for itself.
   * 10 prompt and 5 completion tokens unless given, so usage in results is exact.
   */
  usage?: { promptTokens: number; completionTokens: number } | null;
  /** Waits this long before replying (a slow model); an aborted request stops waiting at once. */
  delayMs?: number;
  /** Thrown instead of replying: a provider failure, a bug. */
  error?: unknown;
}

/** A reply, or a function making one from the request it answers (to act at that moment, or to reply to what was sent). */
export type ScriptedTurn = ScriptedReply | ((request: ReceivedRequest) => ScriptedReply);

/** One request as the loop made it; messages and tools are copies, safe from later changes. */
export interface ReceivedRequest {
  messages: ChatMessage[];
  tools?: ToolSpecification[];
  /** The names of the tools offered, in order; empty when none were. */
  toolNames: string[];
  toolChoice?: ModelRequest['toolChoice'];
  parallelToolCalls?: boolean;
  responseSchema?: JsonSchema;
}

export const defaultScriptedUsage = { promptTokens: 10, completionTokens: 5 } as const;

export class ScriptedChatModel implements ChatModel {
  readonly requests: ReceivedRequest[] = [];
  private readonly turns: ScriptedTurn[];
  private callCount = 0;

  constructor(turns: ScriptedTurn[] = []) {
    this.turns = [...turns];
  }

  /** Adds turns after those already queued. */
  enqueue(...turns: ScriptedTurn[]): void {
    this.turns.push(...turns);
  }

  /** Turns not asked for yet. */
  get remaining(): number {
    return this.turns.length;
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    const received = receivedRequest(request);
    this.requests.push(received);
    const turn = this.turns.shift();
    if (!turn) throw new Error(`the script has no reply left for request ${this.requests.length}`);
    const reply = typeof turn === 'function' ? turn(received) : turn;
    if (reply.delayMs) {
      // Rejects with the signal's own reason, as a provider's client does.
      await sleep(reply.delayMs, undefined, { signal: request.signal }).catch((error: unknown) => {
        throw request.signal?.aborted ? request.signal.reason : error;
      });
    }
    request.signal?.throwIfAborted();
    if (reply.error !== undefined) throw reply.error;
    const toolCalls = (reply.toolCalls ?? []).map((call) => ({
      id: call.id ?? `call_${(this.callCount += 1)}`,
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
    }));
    const usage = reply.usage === undefined ? defaultScriptedUsage : reply.usage;
    return {
      content: reply.content ?? null,
      toolCalls,
      reasoning: reply.reasoning,
      finishReason: reply.finishReason !== undefined ? reply.finishReason : toolCalls.length > 0 ? 'tool_calls' : 'stop',
      usage: usage ? { ...usage, totalTokens: usage.promptTokens + usage.completionTokens } : undefined,
      model: 'scripted-model',
      attempts: 1,
      durationMs: reply.delayMs ?? 0,
    };
  }
}

/** A reply calling one tool. */
export function callReply(name: string, input: unknown = {}, extra: Omit<ScriptedReply, 'toolCalls'> = {}): ScriptedReply {
  return { ...extra, toolCalls: [{ name, arguments: input }] };
}

/** A reply calling `terminate`. */
export function terminateReply(message = 'done', status: 'success' | 'failure' = 'success'): ScriptedReply {
  return callReply('terminate', { status, message });
}

/** The text of a message, its parts joined when it has several. */
export function messageText(message: ChatMessage): string {
  if (typeof message.content === 'string') return message.content;
  if (message.content === null) return '';
  return message.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n');
}

function receivedRequest(request: ModelRequest): ReceivedRequest {
  return {
    messages: structuredClone(request.messages),
    tools: request.tools && structuredClone(request.tools),
    toolNames: (request.tools ?? []).map((tool) => tool.function.name),
    toolChoice: request.toolChoice,
    parallelToolCalls: request.parallelToolCalls,
    responseSchema: request.responseSchema && structuredClone(request.responseSchema),
  };
}
