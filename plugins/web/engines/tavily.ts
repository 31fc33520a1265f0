/**
 * The Tavily search API (key in TAVILY_API_KEY). Tavily takes a country by its English name
 * ("united states") and has no language parameter.
 */
import type { SearchEngine } from '../search-types.js';
import { objectList, parseJsonReply, stringField } from './engine-json.js';

export const tavily: SearchEngine = {
  name: 'tavily',
  defaultEndpoint: 'https://api.tavily.com/search',
  environmentVariable: { name: 'TAVILY_API_KEY', holds: 'key' },
  buildRequest(query, endpoint, credential) {
    const body: Record<string, unknown> = {
      query: query.query,
      max_results: Math.min(query.numResults, 20),
      search_depth: 'basic',
      topic: 'general',
    };
    const country = countryName(query.country);
    if (country) body.country = country;
    return {
      url: new URL(endpoint),
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${credential ?? ''}` },
      body: JSON.stringify(body),
    };
  },
  parse(response) {
    const reply = parseJsonReply(response.text, 'Tavily');
    return objectList(reply.results).map((item) => ({
      title: stringField(item, 'title'),
      url: stringField(item, 'url'),
      snippet: stringField(item, 'content'),
    }));
  },
};

function countryName(code: string | undefined): string | undefined {
  if (!code) return undefined;
  try {
    return new Intl.DisplayNames(['en'], { type: 'region' }).of(code.toUpperCase())?.toLowerCase();
  } catch {
    return undefined;
  }
}
