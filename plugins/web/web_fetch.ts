/**
 * Reads a web page without a browser and returns it as markdown (main content only), or, given
 * a goal, what the page says about that goal. Faster and lighter than the browser for pages that
 * need no clicking or scripts.
 */
import { defineTool, limitOutput } from 'manus-runtime';
import { extractForGoal } from './goal-extraction.js';
import { readWebPage, type WebPage } from './read-page.js';
import { WebError } from './web-errors.js';
import { readFetchSettings } from './web-settings.js';


export default defineTool({
  name: 'web_fetch',
  permissionArguments: { url: 'url' },
  description: 'Read a web page (not a PDF) without a browser, as markdown. Use the browser for pages that need scripts or clicks.',
  parameters: {
    type: 'object',
    properties: {
      url: { type: 'string' },
      goal: { type: 'string', description: 'Only what the page says about this; omit for the whole page.' },
    },
    required: ['url'],
    additionalProperties: false,
  },
  async execute(input, context) {
    const settings = readFetchSettings(context.settings);
    const page = await readWebPage(input.url, settings, {
      fetch: context.network.fetch,
      signal: context.signal,
      // A rule about the URL the model gave holds for every URL a redirect leads to.
      checkRedirect: async (url) => {
        const verdict = await context.checkPermission?.({ ...input, url: url.href });
        if (verdict && !verdict.allowed) {
          throw new WebError('web_redirect_refused', `${input.url} redirected to ${url.href}, which the permissions do not allow without asking (${verdict.reason}). Call web_fetch with that URL if you need it.`);
        }
      },
    });
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
