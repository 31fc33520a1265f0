/** Tab actions: open_tab, switch_tab and close_tab. Tabs keep their number while they are open. */
import { BrowserError } from './browser-errors.js';
import type { BrowserSession } from './browser-session.js';
import { describePage, goToUrl, navigableUrl } from './navigation-actions.js';

export async function openTab(session: BrowserSession, url: string): Promise<string> {
  // Refuse a forbidden URL before a tab is opened for it.
  navigableUrl(session, url);
  const tab = await session.openTab();
  return `Opened tab [${tab.id}] and made it active. ${await goToUrl(session, tab, url)}`;
}

export async function switchTab(session: BrowserSession, id: number): Promise<string> {
  const tab = session.switchTo(id);
  return `Switched to tab [${tab.id}]: now at ${await describePage(tab)}.`;
}

export async function closeTab(session: BrowserSession, id: number | undefined): Promise<string> {
  const target = id ?? session.activeTab?.id;
  if (target === undefined) throw new BrowserError('browser_no_page', 'No tab is open, so none can be closed.');
  await session.closeTab(target);
  const active = session.activeTab;
  if (!active) return `Closed tab [${target}]. No tabs are open now; go_to_url or open_tab opens a page.`;
  return `Closed tab [${target}]. The active tab is [${active.id}]: ${await describePage(active)}.`;
}
