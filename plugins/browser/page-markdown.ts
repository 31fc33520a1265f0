/**
 * The main content of the live page as markdown, for extraction. See page-markdown-script.ts
 * for what is kept and what is left out.
 */
import type { Page } from 'playwright-core';
import { pageMarkdownSource, type MarkdownScriptInput, type MarkdownScriptOutput } from './page-markdown-script.js';
import { pageScriptCall } from './page-script.js';
import { withTimeout } from './time-limit.js';

export type PageMarkdown = MarkdownScriptOutput;

export async function pageToMarkdown(page: Page, options: { maxCharacters: number; timeoutMs: number }): Promise<PageMarkdown> {
  const input: MarkdownScriptInput = { maxCharacters: options.maxCharacters };
  const result = (await withTimeout(page.evaluate(pageScriptCall(pageMarkdownSource, input)), options.timeoutMs, 'reading the page')) as MarkdownScriptOutput;
  return { ...result, markdown: withoutHalfCharacter(result.markdown) };
}

/** A cut at the length limit can leave the first half of a surrogate pair at the end. */
function withoutHalfCharacter(text: string): string {
  const last = text.charCodeAt(text.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? text.slice(0, -1) : text;
}
