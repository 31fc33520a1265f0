/**
 * DuckDuckGo's HTML endpoint, which serves results without scripts. Region is `kl`
 * (country-language, e.g. `us-en`; DuckDuckGo writes the United Kingdom as `uk`).
 */
import { throwIfWalled, EngineBlockedError } from '../engine-blocked.js';
import { unwrapResultUrl } from '../result-links.js';
import type { SearchEngine, SearchResult } from '../search-types.js';
import { languageHeaders, parseDocument, textOf, withParameters } from './engine-html.js';

export const duckDuckGo: SearchEngine = {
  name: 'duckduckgo',
  defaultEndpoint: 'https://html.duckduckgo.com/html/',
  buildRequest(query, endpoint) {
    return {
      url: withParameters(endpoint, { q: query.query, kl: region(query.lang, query.country) }),
      headers: languageHeaders(query.lang, query.country),
    };
  },
  parse(response) {
    // DuckDuckGo answers a rate-limited client with 202 and a page without results.
    if (response.status === 202) throw new EngineBlockedError('blocked: rate limited (HTTP 202)');
    const document = parseDocument(response.text);
    const results: SearchResult[] = [];
    for (const result of document.querySelectorAll('.result')) {
      if (result.matches('.result--ad') || result.querySelector('.badge--ad')) continue;
      const link = result.querySelector('a.result__a');
      const url = unwrapResultUrl(link?.getAttribute('href'), response.url);
      if (!link || !url) continue;
      results.push({ title: textOf(link), url, snippet: textOf(result.querySelector('.result__snippet')) });
    }
    throwIfWalled(response, results);
    return results;
  },
};

function region(lang: string | undefined, country: string | undefined): string | undefined {
  if (!country) return undefined;
  const code = country.toLowerCase() === 'gb' ? 'uk' : country.toLowerCase();
  return `${code}-${(lang ?? 'en').toLowerCase()}`;
}
