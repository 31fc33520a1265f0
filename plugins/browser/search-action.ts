/**
 * The web_search action: search, then open the first result the domain rules allow, and list
 * the other results so the model can open them next. The search itself goes through the
 * web_search tool's engines (with their fallbacks and retries) unless `search_url` names a
 * search page to open in the browser instead.
 */
import { errorMessage } from './browser-errors.js';
import type { ToolContext } from 'manus-runtime';
import { searchWeb } from '../web/search-web.js';
import { BrowserError } from './browser-errors.js';
import type { BrowserSession, BrowserTab } from './browser-session.js';
import { goToUrl, navigableUrl } from './navigation-actions.js';
import { pageScriptCall } from './page-script.js';
import { searchResultsSource, type SearchHit, type SearchResultsInput } from './search-results-script.js';

const resultsListed = 8;

export async function searchAndOpen(session: BrowserSession, tab: BrowserTab, query: string, context: Pick<ToolContext, 'signal' | 'logger' | 'network'>): Promise<string> {
  const hits = session.settings.searchUrl
    ? await searchInPage(session, tab, session.settings.searchUrl, query)
    : await searchWithEngines(session, query, context);
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

async function searchWithEngines(session: BrowserSession, query: string, context: Pick<ToolContext, 'signal' | 'logger' | 'network'>): Promise<SearchHit[]> {
  const outcome = await searchWeb(query, { numResults: resultsListed, settings: session.settings.webSearch }, { ...context, settings: session.settings.webSearch });
  return outcome.results.map((result) => ({ title: result.title, url: result.url }));
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
