/**
 * A SearXNG instance's JSON API (`format=json` must be enabled on the instance). Its base URL
 * comes from SEARXNG_URL or `endpoints.searxng`; language is `language` (e.g. `de-DE`).
 */
import type { SearchEngine } from '../search-types.js';
import { withParameters } from './engine-html.js';
import { objectList, parseJsonReply, stringField } from './engine-json.js';

export const searxng: SearchEngine = {
  name: 'searxng',
  environmentVariable: { name: 'SEARXNG_URL', holds: 'endpoint' },
  buildRequest(query, endpoint) {
    const base = endpoint.endsWith('/') ? endpoint : `${endpoint}/`;
    const language = query.lang ? (query.country ? `${query.lang}-${query.country.toUpperCase()}` : query.lang) : undefined;
    return {
      url: withParameters(new URL('search', base).href, { q: query.query, format: 'json', language }),
      headers: { accept: 'application/json' },
    };
  },
  parse(response) {
    const reply = parseJsonReply(response.text, 'SearXNG');
    return objectList(reply.results).map((item) => ({
      title: stringField(item, 'title'),
      url: stringField(item, 'url'),
      snippet: stringField(item, 'content'),
    }));
  },
};
