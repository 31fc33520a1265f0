/**
 * Keeps a long conversation inside the model's context window. When a request nears the window,
 * the older turns are summarised by the model into one note; the system prompt, the task and the
 * most recent turns stay as they were, and a tool call is never separated from its result. When the
 * summary cannot be had, the oldest turns are dropped instead, with a note saying how many.
 */
import type { ChatModel } from '../contract/model-types.js';
import type { TokenUsage } from '../contract/model-types.js';
import type { ChatMessage } from '../contract/tool.js';
import { truncateMiddle } from '../contract/truncate.js';
import type { CompactionSettings } from '../config/types.js';

export type { CompactionSettings } from '../config/types.js';

/** The two leading messages every compaction keeps: the system prompt and the task. */
const keptPrefix = 2;
const summaryHeading = '[Summary of the earlier part of this task, written to save space]';

/**
 * Where the summarised part ends: at least `keepRecentMessages` stay, and the kept part never starts
 * with a tool result, whose call would then be gone. Undefined when there is nothing worth folding.
 */
export function compactionEnd(history: readonly ChatMessage[], keepRecentMessages: number): number | undefined {
  let end = history.length - keepRecentMessages;
  while (end > keptPrefix && history[end]?.role === 'tool') end -= 1;
  return end - keptPrefix >= 2 ? end : undefined;
}

export interface CompactionResult {
  history: ChatMessage[];
  summary: string;
  end: number;
  usage?: TokenUsage;
}

export async function compactHistory(
  history: readonly ChatMessage[],
  model: ChatModel,
  settings: CompactionSettings,
  signal: AbortSignal,
): Promise<CompactionResult | undefined> {
  const end = compactionEnd(history, settings.keepRecentMessages);
  if (end === undefined) return undefined;
  const reply = await model.complete({
    messages: [
      {
        role: 'system',
        content: 'You condense an AI agent\'s working history so it can continue its task with less context. ' +
          'Keep every fact, number, name, URL, file path, decision and result the agent found or produced, what has ' +
          'been done, what failed and why, and what remains to do. Omit pleasantries and repeated content. Write ' +
          'plain prose and lists, at most about 400 words.',
      },
      { role: 'user', content: `The task:\n${contentText(history[1])}\n\nThe history to condense:\n${transcript(history.slice(keptPrefix, end))}` },
    ],
    signal,
  });
  const summary = (reply.content ?? '').trim();
  if (summary === '') throw new Error('the model returned an empty summary');
  const note: ChatMessage = { role: 'user', content: `${summaryHeading}\n${summary}` };
  return { history: [...history.slice(0, keptPrefix), note, ...history.slice(end)], summary, end, usage: reply.usage };
}

/** Applies a recorded compaction to a history being rebuilt from the events file. */
export function applyCompaction(history: ChatMessage[], end: number, summary: string): ChatMessage[] {
  return [...history.slice(0, keptPrefix), { role: 'user', content: `${summaryHeading}\n${summary}` }, ...history.slice(end)];
}

/**
 * The fallback when no summary can be had: the oldest turns go, from the same place a summary
 * would start, and further (a whole turn at a time) until `fits` holds or only the latest turn is
 * left. Undefined when there is nothing to drop.
 */
export function dropOldestTurns(
  history: readonly ChatMessage[],
  keepRecentMessages: number,
  fits: (history: ChatMessage[]) => boolean,
): { history: ChatMessage[]; end: number } | undefined {
  let end = compactionEnd(history, keepRecentMessages);
  if (end === undefined) return undefined;
  let trimmed = applyDrop(history, end);
  while (!fits(trimmed)) {
    const next = nextTurnStart(history, end);
    if (next === undefined) break;
    end = next;
    trimmed = applyDrop(history, end);
  }
  return { history: trimmed, end };
}

/** Applies a recorded drop to a history being rebuilt from the events file. */
export function applyDrop(history: readonly ChatMessage[], end: number): ChatMessage[] {
  const note: ChatMessage = { role: 'user', content: `[${end - keptPrefix} earlier messages were dropped to fit the context window]` };
  return [...history.slice(0, keptPrefix), note, ...history.slice(end)];
}

/** The next place after `end` where a kept part may start (not on a tool result), leaving at least one message. */
function nextTurnStart(history: readonly ChatMessage[], end: number): number | undefined {
  for (let next = end + 1; next < history.length - 1; next += 1) {
    if (history[next].role !== 'tool') return next;
  }
  return undefined;
}

function transcript(messages: readonly ChatMessage[]): string {
  return messages
    .map((message) => {
      if (message.role === 'assistant') {
        const calls = (message.tool_calls ?? []).map((call) => `${call.function.name}(${truncateMiddle(call.function.arguments, 600).text})`);
        return `assistant: ${message.content ?? ''}${calls.length > 0 ? `\ncalled: ${calls.join('; ')}` : ''}`;
      }
      const text = truncateMiddle(contentText(message), 2000).text;
      return message.role === 'tool' ? `tool result: ${text}` : `${message.role}: ${text}`;
    })
    .join('\n\n');
}

function contentText(message: ChatMessage | undefined): string {
  if (!message) return '';
  if (typeof message.content === 'string') return message.content;
  if (Array.isArray(message.content)) return message.content.map((part) => (part.type === 'text' ? part.text : '[image]')).join(' ');
  return '';
}
