import { describe, expect, it } from 'vitest';
import browserUse from '../plugins/browser/browser_use.js';
import extractContent from '../plugins/browser/extract_content.js';
import { chunkMarkdown, extractionSchema, parseExtraction } from '../plugins/browser/content-extraction.js';
import { pageToMarkdown } from '../plugins/browser/page-markdown.js';
import { existingBrowserSession } from '../plugins/browser/session-registry.js';
import type { ChatMessage, JsonSchema, ToolResult } from '../runtime/contract/tool.js';
import { chromiumMissing as isChromiumMissing, useFixtureSite } from './support/fixture-site.js';
import { useToolContexts, type TestToolContext } from './support/tool-context.js';
import { createToolNetwork } from '../runtime/services/network/tool-network.js';

const chromiumMissing = isChromiumMissing('extract_content');

interface ModelCall {
  messages: ChatMessage[];
  responseSchema?: JsonSchema;
}

type Answer = (call: ModelCall) => unknown;

type TestContext = TestToolContext;

const site = useFixtureSite();
const newContext = useToolContexts();

/** A context whose model records each call and answers with `answer` (objects are sent as JSON). */
function modelContext(answer: Answer, settings: Record<string, unknown> = {}) {
  const calls: ModelCall[] = [];
  const test = newContext({
    settings,
    // The fixture site is on loopback: allowed, as a user would in their configuration.
    network: createToolNetwork({ allowPrivate: true }),
    model: {
      complete: async (messages, options) => {
        const call = { messages, responseSchema: options?.responseSchema };
        calls.push(call);
        const reply = answer(call);
        return typeof reply === 'string' ? reply : JSON.stringify(reply);
      },
    },
  });
  return { test, calls };
}

const userText = (call: ModelCall) => String(call.messages.find((message) => message.role === 'user')!.content);
const isMerge = (call: ModelCall) => String(call.messages[0].content).startsWith('You combine partial extractions');

async function openArticle(test: TestContext): Promise<void> {
  const opened = (await browserUse.execute({ action: 'go_to_url', url: `${site.origin}/article.html` }, test.context)) as ToolResult;
  expect(opened.isError).toBe(false);
}

describe('chunking and reading replies', () => {
  it('cuts at paragraph breaks, keeps every chunk within the size and loses no text', () => {
    const paragraphs = Array.from({ length: 30 }, (_, index) => `Paragraph ${index} ${'word '.repeat(20 + (index % 7) * 5).trim()}.`);
    const markdown = paragraphs.join('\n\n');
    const chunks = chunkMarkdown(markdown, 700);
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(700);
    for (const chunk of chunks.slice(0, -1)) expect(chunk.endsWith('.')).toBe(true);
    expect(chunks.join('\n\n')).toBe(markdown);
  });

  it('never splits a character made of two code units', () => {
    const chunks = chunkMarkdown('🐸'.repeat(50), 7);
    for (const chunk of chunks) expect(chunk).toMatch(/^(🐸)+$/u);
    expect(chunks.join('')).toBe('🐸'.repeat(50));
  });

  it('reads structured replies, fenced JSON and plain prose', () => {
    expect(parseExtraction('{"relevant":true,"extracted":"42 frogs","sources":["https://a.example"]}')).toEqual({ relevant: true, extracted: '42 frogs', sources: ['https://a.example'] });
    expect(parseExtraction('```json\n{"extracted":"a fact","sources":[1,"https://b.example"]}\n```')).toEqual({ relevant: true, extracted: 'a fact', sources: ['https://b.example'] });
    expect(parseExtraction('The page says 42 frogs.')).toEqual({ relevant: true, extracted: 'The page says 42 frogs.', sources: [] });
    expect(parseExtraction('')).toEqual({ relevant: false, extracted: '', sources: [] });
  });
});

describe.skipIf(chromiumMissing)(`extract_content${chromiumMissing ? ' (skipped: no Chromium)' : ''}`, () => {
  it('needs a page opened with browser_use and never starts a browser itself', async () => {
    const { test, calls } = modelContext(() => ({}));
    await expect(Promise.resolve(extractContent.execute({ goal: 'anything' }, test.context))).rejects.toThrow('No web page is open to extract from');
    expect(existingBrowserSession(test.context.resources)).toBeUndefined();
    expect(calls).toEqual([]);
  });

  it('turns the main content into markdown without navigation, banners, sidebars, footers or scripts', async () => {
    const { test } = modelContext(() => ({}));
    await openArticle(test);
    const page = await pageToMarkdown(existingBrowserSession(test.context.resources)!.activeTab!.page, { maxCharacters: 100_000, timeoutMs: 5000 });
    expect(page.title).toBe('Glass frogs of the cloud forest');
    expect(page.root).toBe('main');
    const { markdown } = page;
    expect(markdown.startsWith('# Glass frogs of the cloud forest')).toBe(true);
    expect(markdown).toContain('## Translucent skin');
    expect(markdown).toContain('- Emerald glass frog: short metallic "tink"');
    expect(markdown).toContain('| Site | Best months | Species seen |\n| --- | --- | --- |\n| Monteverde, Costa Rica | May to November | 7 |');
    expect(markdown).toContain('> "A glass frog on a leaf looks like a drop of water');
    expect(markdown).toContain(`[reading list](${site.origin}/tabs.html)`);
    expect(markdown).toContain('212 calling males, up from 187');
    for (const noise of ['We use cookies', 'Accept all cookies', 'Related articles', 'Subscribe', 'Copyright 2025', 'Privacy policy', 'analyticsQueue', 'Articles']) {
      expect(markdown).not.toContain(noise);
    }
  });

  it('asks the model with a response schema and reports what it extracted with its sources', async () => {
    const { test, calls } = modelContext(() => ({
      relevant: true,
      extracted: 'The 2024 count on the Quebrada Grande transect was 212 calling males (187 the year before).',
      sources: [`${site.origin}/tabs.html`],
    }));
    await openArticle(test);
    const result = await extractContent.execute({ goal: 'the latest count of calling males' }, test.context);
    expect(calls).toHaveLength(1);
    expect(calls[0].responseSchema).toEqual(extractionSchema);
    expect(userText(calls[0])).toContain('Goal: the latest count of calling males');
    expect(userText(calls[0])).toContain('212 calling males');
    expect(userText(calls[0])).not.toContain('We use cookies');
    expect(result).toContain(`Extracted from "Glass frogs of the cloud forest" (${site.origin}/article.html) for: the latest count of calling males.`);
    expect(result).toContain('212 calling males (187 the year before)');
    expect(result).toContain(`Sources:\n- ${site.origin}/tabs.html`);
  });

  it('reads a long page in chunks, extracts from each and merges the relevant ones', async () => {
    const { test, calls } = modelContext((call) => {
      if (isMerge(call)) return { relevant: true, extracted: 'Merged: 7 species at Monteverde; 212 calling males in 2024.', sources: [] };
      const text = userText(call);
      if (text.includes('Monteverde')) return { relevant: true, extracted: '7 species at Monteverde', sources: [] };
      if (text.includes('212 calling males')) return { relevant: true, extracted: '212 calling males in 2024', sources: [] };
      return { relevant: false, extracted: '', sources: [] };
    }, { extraction_chunk_characters: 800 });
    await openArticle(test);
    const result = await extractContent.execute({ goal: 'numbers about the frogs' }, test.context);
    const chunkCalls = calls.filter((call) => !isMerge(call));
    expect(chunkCalls.length).toBeGreaterThan(3);
    expect(calls.filter(isMerge)).toHaveLength(1);
    for (const call of chunkCalls) expect(userText(call).split('Page text')[1].length).toBeLessThan(800 + 40);
    // The whole article was read, to its last paragraph.
    expect(chunkCalls.some((call) => userText(call).includes('wash your hands before the walk'))).toBe(true);
    const mergeInput = userText(calls.find(isMerge)!);
    expect(mergeInput).toContain('7 species at Monteverde');
    expect(mergeInput).toContain('212 calling males in 2024');
    expect(result).toContain(`Read in ${chunkCalls.length} parts; 2 had relevant content.`);
    expect(result).toContain('Merged: 7 species at Monteverde; 212 calling males in 2024.');
  });

  it('says when the page has nothing on the goal, and when its end was not read', async () => {
    const { test } = modelContext(() => ({ relevant: false, extracted: '', sources: [] }), { extraction_chunk_characters: 800, extraction_max_chunks: 2 });
    await openArticle(test);
    const result = await extractContent.execute({ goal: 'ticket prices' }, test.context);
    expect(result).toContain(`The page "Glass frogs of the cloud forest" (${site.origin}/article.html) has nothing on: ticket prices.`);
    expect(result).toContain('The end of the page was not read: the page is longer than the extraction limit.');
  });

  it('waits for a browser action in progress before reading the page', async () => {
    const { test, calls } = modelContext(() => ({ relevant: true, extracted: 'found', sources: [] }));
    await browserUse.execute({ action: 'go_to_url', url: `${site.origin}/form.html` }, test.context);
    // As when the model calls both tools in one turn: the kernel only orders calls of one tool.
    await Promise.all([
      browserUse.execute({ action: 'go_to_url', url: `${site.origin}/article.html` }, test.context),
      extractContent.execute({ goal: 'the title' }, test.context),
    ]);
    expect(userText(calls[0])).toContain('Glass frogs of the cloud forest');
  });

  it('gives the same extraction through the browser_use action', async () => {
    const { test, calls } = modelContext(() => ({ relevant: true, extracted: 'Males guard the eggs for up to two weeks.', sources: [] }));
    await openArticle(test);
    const result = (await browserUse.execute({ action: 'extract_content', goal: 'who guards the eggs' }, test.context)) as ToolResult;
    expect(result.isError).toBe(false);
    expect(result.content).toContain('Extracted from "Glass frogs of the cloud forest"');
    expect(result.content).toContain('Males guard the eggs for up to two weeks.');
    expect(calls).toHaveLength(1);
  });
});
