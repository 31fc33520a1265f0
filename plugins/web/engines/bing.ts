/** Bing's result page: `li.b_algo` entries; language `setlang`, market country `cc`. */
import { throwIfWalled } from '../engine-blocked.js';
import { unwrapResultUrl } from '../result-links.js';
import type { SearchEngine, SearchResult } from '../search-types.js';
import { languageHeaders, parseDocument, textOf, withParameters } from './engine-html.js';

export const bing: SearchEngine = {
  name: 'bing',
  defaultEndpoint: 'https://www.bing.com/search',
  buildRequest(query, endpoint) {
    return {
      url: withParameters(endpoint, {
        q: query.query,
        count: String(query.numResults),
        setlang: query.lang,
        cc: query.country?.toUpperCase(),
      }),
      headers: languageHeaders(query.lang, query.country),
    };
  },
  parse(response) {
    const document = parseDocument(response.text);
    const results: SearchResult[] = [];
    for (const item of document.querySelectorAll('li.b_algo')) {
      const link = item.querySelector('h2 a');
      const url = unwrapResultUrl(link?.getAttribute('href'), response.url);
      if (!link || !url) continue;
      // Bing prefixes some snippets with a label ("WEB") that is not part of the text.
      for (const label of item.querySelectorAll('.algoSlug_icon')) label.remove();
      const snippet = item.querySelector('.b_caption p, p.b_lineclamp2, p.b_lineclamp3, p.b_lineclamp4, .b_algoSlug, p');
      results.push({ title: textOf(link), url, snippet: textOf(snippet) });
    }
    throwIfWalled(response, results);
    return results;
  },
};
