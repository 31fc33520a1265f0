/**
 * Counts tokens with tiktoken, once per message: messages are immutable once appended, so a
 * WeakMap keyed by the message object makes a step's count cost only its new messages. tiktoken's
 * tables load on the first count, never at start-up.
 */
import { createRequire } from 'node:module';
import type { ChatMessage } from '../../contract/tool.js';

interface Encoder {
  encode(text: string): Uint32Array;
}

// The chat format's per-message framing (role, separators), as OpenAI documents it.
const tokensPerMessage = 4;
const tokensPerImage = 765;

const encoders = new Map<string, Encoder>();

function encoderFor(model: string): Encoder {
  const name = /gpt-4o|gpt-4\.1|gpt-5|^o\d|chatgpt/i.test(model) ? 'o200k_base' : 'cl100k_base';
  let encoder = encoders.get(name);
  if (!encoder) {
    const tiktoken = createRequire(import.meta.url)('tiktoken') as { get_encoding(name: string): Encoder };
    encoder = tiktoken.get_encoding(name);
    encoders.set(name, encoder);
  }
  return encoder;
}

export class TokenCounter {
  private readonly counts = new WeakMap<object, number>();
  private readonly model: string;

  constructor(model: string) {
    this.model = model;
  }

  countText(text: string): number {
    return text === '' ? 0 : encoderFor(this.model).encode(text).length;
  }

  countMessage(message: ChatMessage): number {
    const cached = this.counts.get(message);
    if (cached !== undefined) return cached;
    let total = tokensPerMessage;
    if (typeof message.content === 'string') total += this.countText(message.content);
    else if (Array.isArray(message.content)) {
      for (const part of message.content) total += part.type === 'text' ? this.countText(part.text) : tokensPerImage;
    }
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) total += this.countText(call.function.name) + this.countText(call.function.arguments);
    }
    this.counts.set(message, total);
    return total;
  }

  countMessages(messages: readonly ChatMessage[]): number {
    let total = 3;
    for (const message of messages) total += this.countMessage(message);
    return total;
  }
}
