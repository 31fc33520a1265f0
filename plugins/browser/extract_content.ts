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
  description:
    'Extract information from the web page open in the browser. Give the goal: what to find or collect (for example ' +
    '"the opening hours and ticket prices" or "every product name with its price"). Returns the relevant content and its source links.',
  parameters: {
    type: 'object',
    properties: {
      goal: { type: 'string', minLength: 1, description: 'What to extract from the current page.' },
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
