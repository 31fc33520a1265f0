/**
 * Reads result links from a search page in the browser (source text, see page-script.ts). With
 * a selector, the links it matches; without one, visible links to other sites. Redirect links
 * (`/l/?uddg=...`, `/url?q=...`) are unwrapped to the page they lead to.
 */

export interface SearchResultsInput {
  selector: string | null;
  limit: number;
}

export interface SearchHit {
  title: string;
  url: string;
}

export const searchResultsSource = String.raw`(input) => {
  const unwrap = (href) => {
    let url;
    try {
      url = new URL(href, location.href);
    } catch {
      return null;
    }
    if (url.hostname === location.hostname) {
      for (const key of ['uddg', 'u', 'url', 'q']) {
        const inner = url.searchParams.get(key);
        if (inner && /^https?:\/\//.test(inner)) return inner;
      }
    }
    return url.href;
  };
  const links = document.querySelectorAll(input.selector || 'a[href]');
  const hits = [];
  const seen = new Set();
  for (const link of links) {
    const url = unwrap(link.getAttribute('href') || '');
    if (!url || !/^https?:/.test(url) || seen.has(url)) continue;
    if (!input.selector && new URL(url).hostname === location.hostname) continue;
    if (link.checkVisibility && !link.checkVisibility()) continue;
    const title = (link.innerText || link.textContent || '').replace(/\s+/g, ' ').trim();
    if (!title) continue;
    seen.add(url);
    hits.push({ title: title.slice(0, 150), url });
    if (hits.length >= input.limit) break;
  }
  return hits;
}`;
