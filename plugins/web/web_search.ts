/**
 * Searches the web through several engines in turn (keyed APIs first when configured, then
 * DuckDuckGo, Bing, Google and Baidu), so one engine being blocked or down does not stop the
 * search. Optionally reads each result page.
 */
import { defineTool, limitOutput } from 'manus-runtime';
import { keyedEndpointGrants } from './engines/search-engines.js';
import { formatSearchOutcome } from './search-report.js';
import { maximumResults, searchWeb } from './search-web.js';
import { readFetchSettings } from './web-settings.js';


export default defineTool({
  name: 'web_search',
  permissionArguments: { query: 'text' },
  // An engine's endpoint receives the user's key for it: pointing it elsewhere is the user's choice.
  settingGrants: keyedEndpointGrants(),
  description: 'Search the web: titles, URLs and snippets of the top results. Read a whole result with web_fetch.',
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', minLength: 1 },
      num_results: { type: 'integer', minimum: 1, maximum: maximumResults, default: 5 },
      lang: { type: 'string', pattern: '^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})?$', description: 'e.g. "en".' },
      country: { type: 'string', pattern: '^[A-Za-z]{2}$', description: 'e.g. "us".' },
      fetch_content: { type: 'boolean', description: 'Add the start of each page\'s text (slower).' },
    },
    required: ['query'],
    additionalProperties: false,
  },
  async execute(input, context) {
    const outcome = await searchWeb(
      input.query,
      { numResults: input.num_results, lang: input.lang, country: input.country, fetchContent: input.fetch_content },
      context,
    );
    const limited = await limitOutput(formatSearchOutcome(input.query, outcome), {
      limit: readFetchSettings(context.settings).maxCharacters,
      runDirectory: context.runDirectory,
      label: 'web_search',
    });
    // The results as data too, for a tool that searches through this one (the browser's web_search).
    const results = outcome.results.map(({ title, url, snippet }) => ({ title, url, snippet }));
    return { content: limited.text, data: { results } };
  },
});
