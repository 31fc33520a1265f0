/** The Brave Search API (key in BRAVE_API_KEY): `country` and `search_lang` parameters. */
import type { SearchEngine } from '../search-types.js';
import { withParameters } from './engine-html.js';
import { objectList, parseJsonReply, stringField } from './engine-json.js';

export const brave: SearchEngine = {
  name: 'brave',
  defaultEndpoint: 'https://api.search.brave.com/res/v1/web/search',
  environmentVariable: { name: 'BRAVE_API_KEY', holds: 'key' },
  buildRequest(query, endpoint, credential) {
    return {
      url: withParameters(endpoint, {
        q: query.query,
        count: String(Math.min(query.numResults, 20)),
        country: query.country?.toUpperCase(),
        search_lang: query.lang?.toLowerCase(),
      }),
      headers: { accept: 'application/json', 'x-subscription-token': credential ?? '' },
    };
  },
  parse(response) {
    const reply = parseJsonReply(response.text, 'Brave');
    const web = reply.web && typeof reply.web === 'object' ? (reply.web as Record<string, unknown>) : {};
    return objectList(web.results).map((item) => ({
      title: stringField(item, 'title'),
      url: stringField(item, 'url'),
      snippet: stringField(item, 'description'),
    }));
  },
};
