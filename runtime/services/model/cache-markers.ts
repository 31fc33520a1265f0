/**
 * Explicit prompt-cache markers, for endpoints that cache only what is marked (Anthropic's models
 * behind OpenAI-compatible gateways such as OpenRouter or LiteLLM): `cache_control` on the system
 * prompt, which never changes, and on the last stored message, the end of the prefix the next
 * request repeats. The rest of the request (this step's ephemeral messages) stays unmarked.
 */
import type { ChatMessage } from '../../contract/tool.js';

const marker = { type: 'ephemeral' } as const;

type MarkedText = { type: 'text'; text: string; cache_control: typeof marker };

export function withCacheMarkers(messages: ChatMessage[], stableMessages: number): unknown[] {
  const marked: unknown[] = [...messages];
  const markAt = (index: number) => {
    const message = messages[index];
    if (message.role === 'system' || message.role === 'tool' || (message.role === 'assistant' && message.content)) {
      const text: MarkedText = { type: 'text', text: message.content as string, cache_control: marker };
      marked[index] = { ...message, content: [text] };
      return true;
    }
    if (message.role === 'user') {
      const parts: object[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : [...message.content];
      const last = parts.length - 1;
      if (last < 0) return false;
      parts[last] = { ...parts[last], cache_control: marker };
      marked[index] = { ...message, content: parts };
      return true;
    }
    return false;
  };
  if (messages[0]?.role === 'system') markAt(0);
  // An assistant turn of tool calls alone has no text to mark; the message before it ends the prefix as well.
  for (let index = Math.min(stableMessages, messages.length) - 1; index > 0; index -= 1) {
    if (markAt(index)) break;
  }
  return marked;
}
