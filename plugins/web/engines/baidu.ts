/**
 * Baidu's result page: `.result h3 a` entries. Its links go through an encrypted redirector,
 * so the destination comes from the result's `mu` attribute when Baidu gives one. Baidu has no
 * language or country parameter; Accept-Language is sent instead.
 */
import { throwIfWalled } from '../engine-blocked.js';
import { unwrapResultUrl } from '../result-links.js';
import type { SearchEngine, SearchResult } from '../search-types.js';
import { languageHeaders, parseDocument, textOf, withParameters } from './engine-html.js';

const snippetSelector = '.c-abstract, [class*="content-right"], .c-span-last, [data-module="abstract"]';

export const baidu: SearchEngine = {
  name: 'baidu',
  defaultEndpoint: 'https://www.baidu.com/s',
  buildRequest(query, endpoint) {
    return {
      url: withParameters(endpoint, { wd: query.query, rn: String(query.numResults) }),
      headers: languageHeaders(query.lang, query.country),
    };
  },
  parse(response) {
    const document = parseDocument(response.text);
    const results: SearchResult[] = [];
    for (const result of document.querySelectorAll('.result, .result-op')) {
      const link = result.querySelector('h3 a');
      const url = unwrapResultUrl(result.getAttribute('mu') || link?.getAttribute('href'), response.url);
      if (!link || !url) continue;
      results.push({ title: textOf(link), url, snippet: textOf(result.querySelector(snippetSelector)) });
    }
    throwIfWalled(response, results);
    return results;
  },
};
