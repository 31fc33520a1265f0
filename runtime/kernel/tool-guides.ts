/**
 * A tool's guide (its how-to at length) reaches the model once, at the head of the tool's first
 * result, instead of with every request. The history is the record of what the model was told:
 * a guide counts as given while a message of the history still holds it, so one folded away by
 * compaction, or never given before a resumed run's last stop, is given again with the next result.
 */
import type { AnyToolDefinition, ChatMessage } from '../contract/tool.js';

function heading(toolName: string): string {
  return `How to use ${toolName}:`;
}

export class ToolGuides {
  private readonly given = new Set<string>();

  constructor(private readonly tools: ReadonlyMap<string, AnyToolDefinition>) {}

  /** Learns which guides the history holds: at the start, and whenever messages left it. */
  recall(history: readonly ChatMessage[]): void {
    this.given.clear();
    for (const tool of this.tools.values()) {
      if (!tool.guide) continue;
      const marker = heading(tool.name);
      if (history.some((message) => message.role === 'tool' && message.content.startsWith(marker))) this.given.add(tool.name);
    }
  }

  /** The result as the model sees it: after the tool's guide, the first time. */
  withGuide(toolName: string, content: string): string {
    const guide = this.tools.get(toolName)?.guide;
    if (!guide || this.given.has(toolName)) return content;
    this.given.add(toolName);
    return `${heading(toolName)}\n${guide}\n\n${content}`;
  }
}
