/**
 * extract_content, shared by the browser_use action and the extract_content tool: the active
 * page's main content as markdown, then the model's extraction for the goal.
 */
import type { ToolContext } from 'manus-runtime';
import type { ExtractionSettings } from './browser-settings.js';
import type { BrowserSession } from './browser-session.js';
import { extractFromPage, formatExtraction } from './content-extraction.js';
import { pageToMarkdown } from './page-markdown.js';

export async function extractFromActivePage(
  session: BrowserSession,
  goal: string,
  model: ToolContext['model'],
  settings: ExtractionSettings,
  signal: AbortSignal,
): Promise<string> {
  session.requireActiveTab();
  const maxCharacters = settings.chunkCharacters * settings.maxChunks;
  const page = await session.run('reading the page', (tab) => pageToMarkdown(tab.page, { maxCharacters, timeoutMs: session.settings.actionTimeoutMs }), { signal });
  if (page.markdown.trim() === '') return `The page "${page.title || 'untitled'}" (${page.url}) has no readable text to extract from.`;
  return formatExtraction(await extractFromPage(page, goal, model, settings, signal));
}
