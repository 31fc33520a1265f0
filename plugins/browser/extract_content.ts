/**
 * Extracts what a goal asks for from the page open in the browser: the page's main content as
 * markdown (no navigation, headers, footers, banners) is read by the model in chunks and the
 * relevant parts merged, so long pages are read to the end. Needs a page opened with browser_use.
 */
import { defineTool } from 'manus-runtime';
import { BrowserError } from './browser-errors.js';
import { readExtractionSettings } from './browser-settings.js';
import { extractFromActivePage } from './extract-page.js';
import { existingBrowserSession } from './session-registry.js';


export default defineTool({
  name: 'extract_content',
  description: 'Extract what the goal asks for from the page open in the browser, with its links.',
  parameters: {
    type: 'object',
    properties: {
      goal: { type: 'string', minLength: 1, description: 'e.g. "every product with its price".' },
    },
    required: ['goal'],
    additionalProperties: false,
  },
  sequential: true,
  async execute({ goal }, context) {
    const settings = readExtractionSettings(context.settings);
    const session = existingBrowserSession(context.resources);
    if (!session?.activeTab) {
      throw new BrowserError('browser_no_page', 'No web page is open to extract from: open one with browser_use (go_to_url or web_search) first.');
    }
    return session.exclusive(() => extractFromActivePage(session, goal, context.model, settings, context.signal));
  },
});
