/**
 * Reads a web page without a browser and returns it as markdown (main content only), or, given
 * a goal, what the page says about that goal. Faster and lighter than the browser for pages that
 * need no clicking or scripts.
 */
import { defineTool, limitOutput } from 'manus-runtime';
import { extractForGoal } from './goal-extraction.js';
import { readWebPage, type WebPage } from './read-page.js';
import { readFetchSettings } from './web-settings.js';


export default defineTool({
  name: 'web_fetch',
  description: [
    'Fetch a web page (http or https) without a browser and return its main content as markdown, with',
    'headings, lists, tables, code and links kept. JSON and plain text come back as they are; PDFs and binary',
    'files are refused. Give "goal" to get only what the page says about it (for example "the opening hours',
    'and prices"), which keeps long pages short. Use the browser instead for pages that need scripts, logins or clicks.',
  ].join(' '),
  parameters: {
    type: 'object',
    properties: {
      url: { type: 'string', description: 'The absolute URL of the page, such as https://example.com/about.' },
      goal: { type: 'string', description: 'What to extract from the page. Omit to get the whole page as markdown.' },
    },
    required: ['url'],
    additionalProperties: false,
  },
  async execute(input, context) {
    const settings = readFetchSettings(context.settings);
    const page = await readWebPage(input.url, settings, { fetch: context.network.fetch, signal: context.signal });
    const goal = input.goal?.trim();
    if (goal) {
      const result = await extractForGoal(page.text, context.model, {
        goal,
        url: page.url,
        chunkCharacters: settings.extractChunkCharacters,
        maxChunks: settings.extractMaxChunks,
        signal: context.signal,
      });
      const coverage =
        result.partsRead < result.partsTotal
          ? `\n\n(Only the first ${result.partsRead} of ${result.partsTotal} parts of the page were read; extract_max_chunks sets the limit.)`
          : '';
      return `Extracted from ${page.url} for the goal "${goal}":\n\n${result.extraction}${coverage}`;
    }
    const limited = await limitOutput(`${describePage(page)}\n\n${page.text}`, {
      limit: settings.maxCharacters,
      runDirectory: context.runDirectory,
      label: 'web_fetch',
    });
    return limited.text;
  },
});

function describePage(page: WebPage): string {
  const lines = [page.url === page.requestedUrl ? `URL: ${page.url}` : `URL: ${page.url} (redirected from ${page.requestedUrl})`];
  if (page.title) lines.push(`Title: ${page.title}`);
  if (page.truncatedAtBytes !== undefined) lines.push(`(The page is larger than ${page.truncatedAtBytes} bytes; only its start was read.)`);
  return lines.join('\n');
}
