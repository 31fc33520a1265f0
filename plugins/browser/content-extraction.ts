/**
 * Extraction: the model reads a page's markdown and returns what a goal asks for, as structured
 * output. A long page is read in chunks (each extracted separately, a few at a time) and the
 * relevant parts are merged by one more call, so nothing past an arbitrary cut is lost.
 *
 * The structured answer, per chunk and merged:
 *   { "relevant": boolean,   // whether the text holds anything the goal asks for
 *     "extracted": string,   // that information, in markdown, facts kept verbatim
 *     "sources": string[] }  // URLs in the text that back it or lead further
 */
import type { ChatMessage, JsonSchema, ToolContext } from 'manus-runtime';
import type { ExtractionSettings } from './browser-settings.js';

export interface Extraction {
  relevant: boolean;
  extracted: string;
  sources: string[];
}

export interface ExtractionOutcome extends Extraction {
  goal: string;
  url: string;
  title: string;
  /** Chunks read, of the chunks the page has. */
  chunksRead: number;
  chunksTotal: number;
  relevantChunks: number;
  /** Characters of the page's markdown that were not read (past `maxChunks`). */
  unreadCharacters: number;
  /** Whether the end of the page went unread, by either limit. */
  endUnread: boolean;
}

export interface ExtractionPage {
  url: string;
  title: string;
  markdown: string;
  /** The markdown was already cut at a length limit before extraction. */
  truncated?: boolean;
}

export const extractionSchema: JsonSchema = {
  type: 'object',
  properties: {
    relevant: { type: 'boolean', description: 'Whether the text contains information the goal asks for.' },
    extracted: { type: 'string', description: 'The information the goal asks for, in markdown; empty when nothing is relevant.' },
    sources: { type: 'array', items: { type: 'string' }, description: 'URLs from the text that back the information or lead to more.' },
  },
  required: ['relevant', 'extracted', 'sources'],
  additionalProperties: false,
};

const instructions = [
  'You extract information from a web page for a research agent. Use only the page text you are given; never add facts from elsewhere.',
  'Reply with one JSON object: {"relevant": boolean, "extracted": string, "sources": string[]}.',
  '"relevant" says whether the text holds anything the goal asks for. "extracted" gives that information as completely as the goal needs,',
  'in markdown, keeping names, numbers, dates, prices, quotes and URLs exactly as written; it is "" when nothing is relevant.',
  '"sources" lists URLs from the text that back the information or lead to more of it (at most 10).',
].join(' ');

const mergeInstructions = [
  'You combine partial extractions, each taken from one part of the same web page, into one answer for the goal.',
  'Keep every distinct relevant fact, drop repetition, order it sensibly, and do not add anything the parts do not say.',
  'Reply with one JSON object: {"relevant": boolean, "extracted": string, "sources": string[]}.',
].join(' ');

/** Parts extracted at once: enough to cut waiting on long pages, few enough to respect rate limits. */
const concurrentChunks = 3;

export async function extractFromPage(
  page: ExtractionPage,
  goal: string,
  model: ToolContext['model'],
  settings: ExtractionSettings,
  signal?: AbortSignal,
): Promise<ExtractionOutcome> {
  const chunks = chunkMarkdown(page.markdown, settings.chunkCharacters);
  const read = chunks.slice(0, settings.maxChunks);
  const unreadCharacters = chunks.slice(settings.maxChunks).reduce((sum, chunk) => sum + chunk.length, 0);
  const partial = await mapConcurrently(read, concurrentChunks, (chunk, position) =>
    askModel(model, [
      { role: 'system', content: instructions },
      { role: 'user', content: chunkPrompt(page, goal, chunk, position, read.length) },
    ], signal),
  );
  const relevant = partial.filter((part) => part.relevant && part.extracted.trim() !== '');
  let merged: Extraction;
  if (relevant.length === 0) merged = { relevant: false, extracted: '', sources: [] };
  else if (relevant.length === 1) merged = relevant[0];
  else merged = await askModel(model, [{ role: 'system', content: mergeInstructions }, { role: 'user', content: mergePrompt(page, goal, relevant) }], signal);
  return {
    ...merged,
    sources: [...new Set(merged.sources)],
    goal,
    url: page.url,
    title: page.title,
    chunksRead: read.length,
    chunksTotal: chunks.length,
    relevantChunks: relevant.length,
    unreadCharacters,
    endUnread: unreadCharacters > 0 || page.truncated === true,
  };
}

/** The outcome as the model reads it in a tool result. */
export function formatExtraction(outcome: ExtractionOutcome): string {
  const where = `"${outcome.title || 'untitled'}" (${outcome.url})`;
  const reading = outcome.chunksTotal > 1
    ? ` Read in ${outcome.chunksRead} parts; ${outcome.relevantChunks} had relevant content.`
    : '';
  const unread = outcome.endUnread ? ' The end of the page was not read: the page is longer than the extraction limit.' : '';
  if (!outcome.relevant || outcome.extracted.trim() === '') {
    return `The page ${where} has nothing on: ${outcome.goal}.${reading}${unread}`;
  }
  const sources = outcome.sources.length > 0 ? `\n\nSources:\n${outcome.sources.map((source) => `- ${source}`).join('\n')}` : '';
  return `Extracted from ${where} for: ${outcome.goal}.${reading}${unread}\n\n${outcome.extracted.trim()}${sources}`;
}

/**
 * Splits markdown into chunks of at most `size` characters, at paragraph breaks where it can,
 * then at line breaks, then at spaces; a chunk never ends inside a surrogate pair.
 */
export function chunkMarkdown(markdown: string, size: number): string[] {
  const text = markdown.trim();
  if (text === '') return [];
  const chunks: string[] = [];
  let rest = text;
  while (rest.length > size) {
    const cut = cutPoint(rest, size);
    chunks.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) chunks.push(rest);
  return chunks;
}

function cutPoint(text: string, size: number): number {
  const window = text.slice(0, size);
  // Prefer a break in the second half, so chunks stay near the size asked for.
  for (const separator of ['\n\n', '\n', ' ']) {
    const at = window.lastIndexOf(separator);
    if (at >= size / 2) return at + separator.length;
  }
  const code = text.charCodeAt(size - 1);
  return code >= 0xd800 && code <= 0xdbff ? size - 1 : size;
}

function chunkPrompt(page: ExtractionPage, goal: string, chunk: string, position: number, total: number): string {
  const part = total > 1 ? ` (part ${position + 1} of ${total})` : '';
  return `Goal: ${goal}\n\nPage: ${page.title || 'untitled'} — ${page.url}\n\nPage text${part}:\n\n${chunk}`;
}

function mergePrompt(page: ExtractionPage, goal: string, parts: Extraction[]): string {
  const listed = parts
    .map((part, index) => `### Part ${index + 1}\n${part.extracted.trim()}\nSources: ${part.sources.join(', ') || 'none'}`)
    .join('\n\n');
  return `Goal: ${goal}\n\nPage: ${page.title || 'untitled'} — ${page.url}\n\nPartial extractions:\n\n${listed}`;
}

async function askModel(model: ToolContext['model'], messages: ChatMessage[], signal: AbortSignal | undefined): Promise<Extraction> {
  const reply = await model.complete(messages, { responseSchema: extractionSchema, signal });
  return parseExtraction(reply);
}

/**
 * Reads the model's reply. A model without structured output may wrap the JSON in a code fence
 * or answer in prose; prose is kept as the extraction rather than thrown away.
 */
export function parseExtraction(reply: string): Extraction {
  const text = reply.trim();
  const candidate = /^```(?:json)?\s*([\s\S]*?)\s*```$/.exec(text)?.[1] ?? text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1);
  try {
    const value = JSON.parse(candidate) as Partial<Extraction>;
    if (typeof value === 'object' && value !== null && typeof value.extracted === 'string') {
      return {
        relevant: typeof value.relevant === 'boolean' ? value.relevant : value.extracted.trim() !== '',
        extracted: value.extracted,
        sources: Array.isArray(value.sources) ? value.sources.filter((source): source is string => typeof source === 'string') : [],
      };
    }
  } catch {
    // Not JSON: handled below as prose.
  }
  return { relevant: text !== '', extracted: text, sources: [] };
}

async function mapConcurrently<Item, Result>(items: Item[], limit: number, work: (item: Item, index: number) => Promise<Result>): Promise<Result[]> {
  const results: Result[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await work(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
