/**
 * The web_search action: search, then open the first result the domain rules allow, and list
 * the other results so the model can open them next. The search itself goes through the
 * web_search tool (its engines, fallbacks, retries, settings and permissions) unless `search_url`
 * names a search page to open in the browser instead.
 */
import type { ToolContext } from 'manus-runtime';
import { BrowserError, errorMessage } from './browser-errors.js';
import type { BrowserSession, BrowserTab } from './browser-session.js';
import { goToUrl, navigableUrl } from './navigation-actions.js';
import { pageScriptCall } from './page-script.js';
import { searchResultsSource, type SearchHit, type SearchResultsInput } from './search-results-script.js';

const resultsListed = 8;

/**
 * Opens the first allowed result. `engineHits` are the results of a search made through the
 * web_search tool; without them, the session's search page is searched.
 */
export async function searchAndOpen(session: BrowserSession, tab: BrowserTab, query: string, engineHits: SearchHit[] | undefined): Promise<string> {
  const hits = engineHits ?? (await searchInPage(session, tab, session.settings.searchUrl!, query));
  const allowed = hits.filter((hit) => !session.settings.domainRules.refusal(hit.url));
  if (allowed.length === 0) {
    const reason = hits.length > 0 ? ' that the domain rules allow' : '';
    throw new BrowserError('browser_action_failed', `The search for ${JSON.stringify(query)} found no results${reason}. Try other words, or go_to_url a site you know.`);
  }
  const [first, ...others] = allowed;
  const opened = await goToUrl(session, tab, first.url);
  const rest = others.slice(0, resultsListed - 1).map((hit, position) => `${position + 2}. ${hit.title} — ${hit.url}`);
  const more = rest.length > 0 ? `\nOther results (open one with go_to_url or open_tab):\n${rest.join('\n')}` : '';
  return `Searched for ${JSON.stringify(query)} and opened the first result, ${JSON.stringify(first.title)}. ${opened}${more}`;
}

/**
 * The results of the query from the web_search tool. It runs before the browser action starts, and
 * outside its time limit: the search may wait for the user's approval, which must not time out.
 */
export async function searchWithEngines(query: string, context: Pick<ToolContext, 'callTool'>): Promise<SearchHit[]> {
  if (!context.callTool) throw new BrowserError('browser_action_failed', 'This run cannot search through the web_search tool; set tool_settings.browser_use.search_url to search on a page instead.');
  const result = await context.callTool('web_search', { query, num_results: resultsListed });
  if (result.isError) throw new BrowserError('browser_action_failed', `The search for ${JSON.stringify(query)} failed: ${result.content}`);
  return searchHitsOf(result.data);
}

/** The title and URL of each result web_search gave as data; anything else in it is left out. */
function searchHitsOf(data: unknown): SearchHit[] {
  const results = (data as { results?: unknown } | undefined)?.results;
  if (!Array.isArray(results)) return [];
  return results.flatMap((result: unknown) => {
    const { title, url } = (result ?? {}) as { title?: unknown; url?: unknown };
    return typeof url === 'string' ? [{ title: typeof title === 'string' ? title : url, url }] : [];
  });
}

async function searchInPage(session: BrowserSession, tab: BrowserTab, searchUrl: string, query: string): Promise<SearchHit[]> {
  const url = searchUrl.replace('{query}', encodeURIComponent(query));
  try {
    navigableUrl(session, url);
  } catch (error) {
    throw new BrowserError('browser_domain_blocked', `The search page cannot be opened (${errorMessage(error)}) Allow its domain, or change tool_settings.browser_use.search_url.`);
  }
  await goToUrl(session, tab, url);
  const input: SearchResultsInput = { selector: session.settings.searchResultSelector ?? null, limit: resultsListed * 2 };
  return (await tab.page.evaluate(pageScriptCall(searchResultsSource, input))) as SearchHit[];
}
