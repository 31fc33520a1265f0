/**
 * Answers a goal ("the opening hours", "every price in the table") from a page's markdown with
 * the model: each part of a long page is read on its own, then the relevant findings are merged
 * into one answer. Parts are read a few at a time, in parallel.
 */
import type { ChatMessage, JsonSchema, ToolContext } from 'manus-runtime';
import { splitIntoChunks } from './text-chunks.js';
import { WebError } from './web-errors.js';

export interface GoalExtractionOptions {
  goal: string;
  url: string;
  chunkCharacters: number;
  maxChunks: number;
  signal?: AbortSignal;
}

export interface GoalExtraction {
  extraction: string;
  /** Whether any part of the page held information for the goal. */
  found: boolean;
  partsRead: number;
  partsTotal: number;
}

const partSchema: JsonSchema = {
  type: 'object',
  properties: {
    relevant: { type: 'boolean', description: 'Whether this part of the page holds information for the goal.' },
    extraction: { type: 'string', description: 'The information for the goal, empty when none.' },
  },
  required: ['relevant', 'extraction'],
  additionalProperties: false,
};

const mergeSchema: JsonSchema = {
  type: 'object',
  properties: { extraction: { type: 'string', description: 'One answer for the goal.' } },
  required: ['extraction'],
  additionalProperties: false,
};

const systemPrompt =
  'You extract information from web pages. Use only the page text you are given; never add facts from ' +
  'elsewhere. Keep exact figures, names, dates, prices and links as they appear. Answer in JSON matching the schema.';

const parallelParts = 4;

export async function extractForGoal(markdown: string, model: ToolContext['model'], options: GoalExtractionOptions): Promise<GoalExtraction> {
  const nothing = 'The page holds no information for this goal.';
  if (!markdown.trim()) return { extraction: nothing, found: false, partsRead: 0, partsTotal: 0 };
  const parts = splitIntoChunks(markdown, options.chunkCharacters);
  const read = parts.slice(0, options.maxChunks);
  const findings = await mapInBatches(read, parallelParts, (part, index) =>
    readPart(part, index, read.length, model, options),
  );
  const relevant = findings.filter((finding) => finding.relevant && finding.extraction.trim());
  const base = { partsRead: read.length, partsTotal: parts.length };
  if (relevant.length === 0) return { ...base, found: false, extraction: nothing };
  if (relevant.length === 1) return { ...base, found: true, extraction: relevant[0].extraction.trim() };
  return { ...base, found: true, extraction: await mergeFindings(relevant.map((finding) => finding.extraction), model, options) };
}

async function readPart(part: string, index: number, total: number, model: ToolContext['model'], options: GoalExtractionOptions) {
  const where = total > 1 ? ` (part ${index + 1} of ${total})` : '';
  const messages: ChatMessage[] = [
    { role: 'system', content: systemPrompt },
    {
      role: 'user',
      content:
        `Goal: ${options.goal}\n\nPage: ${options.url}${where}\n\n<page>\n${part}\n</page>\n\n` +
        'Set "relevant" to whether this text holds information for the goal, and put that information in "extraction".',
    },
  ];
  const reply = parseReply(await complete(model, messages, partSchema, options.signal));
  const extraction = typeof reply.extraction === 'string' ? reply.extraction : '';
  return { relevant: reply.relevant !== false && extraction.trim().length > 0, extraction };
}

async function mergeFindings(findings: string[], model: ToolContext['model'], options: GoalExtractionOptions): Promise<string> {
  const numbered = findings.map((finding, index) => `<finding part="${index + 1}">\n${finding.trim()}\n</finding>`).join('\n\n');
  const messages: ChatMessage[] = [
    { role: 'system', content: systemPrompt },
    {
      role: 'user',
      content:
        `Goal: ${options.goal}\n\nThese findings come from consecutive parts of ${options.url}:\n\n${numbered}\n\n` +
        'Merge them into one answer for the goal in "extraction": keep every specific fact, drop repetition.',
    },
  ];
  const reply = parseReply(await complete(model, messages, mergeSchema, options.signal));
  return typeof reply.extraction === 'string' && reply.extraction.trim() ? reply.extraction.trim() : findings.join('\n\n');
}

async function complete(model: ToolContext['model'], messages: ChatMessage[], responseSchema: JsonSchema, signal?: AbortSignal): Promise<string> {
  try {
    return await model.complete(messages, { responseSchema, signal });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new WebError('web_extraction_failed', `The model could not extract from the page: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Models without structured output wrap JSON in a code fence or answer in prose; prose is taken
 * as the extraction itself.
 */
function parseReply(reply: string): Record<string, unknown> {
  const unfenced = reply.trim().replace(/^```(?:json)?\s*\n?([\s\S]*?)\n?```$/, '$1').trim();
  try {
    const parsed: unknown = JSON.parse(unfenced);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Not JSON: fall through to the prose reading.
  }
  return { relevant: unfenced.length > 0, extraction: unfenced };
}

async function mapInBatches<Item, Result>(items: Item[], batchSize: number, map: (item: Item, index: number) => Promise<Result>): Promise<Result[]> {
  const results: Result[] = [];
  for (let start = 0; start < items.length; start += batchSize) {
    const batch = items.slice(start, start + batchSize);
    results.push(...(await Promise.all(batch.map((item, offset) => map(item, start + offset)))));
  }
  return results;
}
