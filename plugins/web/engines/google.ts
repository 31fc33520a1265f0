/**
 * Google's result page: each result is a link holding an `h3`, usually inside `div.g`; the
 * scriptless page links through `/url?q=`. Interface language `hl`, country `gl`.
 */
import { throwIfWalled } from '../engine-blocked.js';
import { unwrapResultUrl } from '../result-links.js';
import type { SearchEngine, SearchResult } from '../search-types.js';
import { languageHeaders, parseDocument, textOf, withParameters } from './engine-html.js';

const snippetSelector = '.VwiC3b, [data-sncf], .IsZvec, .s3v9rd, .st';

export const google: SearchEngine = {
  name: 'google',
  defaultEndpoint: 'https://www.google.com/search',
  buildRequest(query, endpoint) {
    return {
      url: withParameters(endpoint, {
        q: query.query,
        num: String(query.numResults),
        hl: query.lang,
        gl: query.country?.toLowerCase(),
      }),
      headers: languageHeaders(query.lang, query.country),
    };
  },
  parse(response) {
    const document = parseDocument(response.text);
    const results: SearchResult[] = [];
    for (const heading of document.querySelectorAll('a h3')) {
      const link = heading.closest('a');
      const url = unwrapResultUrl(link?.getAttribute('href'), response.url);
      // Links back into Google (more searches, images, maps) are not results.
      if (!link || !url || isGoogleLink(new URL(url), response.url)) continue;
      const container = heading.closest('div.g') ?? link.parentElement?.parentElement ?? link;
      results.push({ title: textOf(heading), url, snippet: snippetOf(container, link) });
    }
    throwIfWalled(response, results);
    return results;
  },
};

function isGoogleLink(url: URL, pageUrl: URL): boolean {
  return url.host === pageUrl.host || /(^|\.)google\.[a-z.]+$/.test(url.hostname);
}

function snippetOf(container: Element, link: Element): string {
  const marked = container.querySelector(snippetSelector);
  if (marked) return textOf(marked);
  // Without a known snippet class, the container's text minus the link is the snippet.
  const linkText = textOf(link);
  return textOf(container).replace(linkText, '').trim();
}
