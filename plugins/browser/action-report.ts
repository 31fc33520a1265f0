/**
 * Turns an action's outcome into the result the model reads: the action's own sentence, then
 * what happened on the side (tabs the page opened, dialogs answered, downloads saved,
 * navigations the domain rules stopped), and the element list when no state provider shows it.
 * Navigations the rules stopped are undone here, so the tab shows a real page, not an error page.
 */
import { errorMessage } from './browser-errors.js';
import type { ToolResult } from 'manus-runtime';
import type { BrowserSession, BrowserTab, SessionNotes } from './browser-session.js';
import { indexElements } from './element-index.js';
import { formatElementList } from './element-list.js';
import { describePage } from './navigation-actions.js';
import { withTimeout } from './time-limit.js';

export interface ReportOptions {
  /** Add the element list: the model sees no browser state otherwise. */
  listElements: boolean;
}

/** Downloads usually finish within moments; a large one is reported as still running. */
const downloadWaitMs = 10_000;
const errorPageWaitMs = 1000;
const newTabWaitMs = 3000;
const elementListCharacters = 4000;

export async function reportAction(session: BrowserSession, outcome: { summary?: string; failure?: unknown }, options: ReportOptions): Promise<ToolResult> {
  await session.settleDownloads(downloadWaitMs);
  const notes = session.takeNotes();
  const lines: string[] = [];
  if (outcome.failure !== undefined) lines.push(`Error: ${errorMessage(outcome.failure)}`);
  if (outcome.summary) lines.push(outcome.summary);
  const blockedLines = await undoBlockedNavigations(session, notes);
  lines.push(...blockedLines);
  lines.push(...(await adoptOpenedTabs(session, notes)));
  for (const dialog of notes.dialogs) lines.push(`The page showed a dialog and it was accepted (${dialog}).`);
  for (const file of notes.downloads) lines.push(`Downloaded ${file} into the workspace.`);
  for (const problem of notes.downloadProblems) lines.push(`A download failed: ${problem}.`);
  if (options.listElements && session.activeTab && session.usable) lines.push(await elementListFor(session.activeTab, session));
  return {
    content: lines.join('\n'),
    isError: outcome.failure !== undefined || blockedLines.length > 0,
    files: notes.downloads.length > 0 ? notes.downloads : undefined,
  };
}

/**
 * A navigation the rules stopped leaves Chromium's error page in the tab (or an empty new tab);
 * go back to the page the model was on, or close the empty tab, and say what was refused.
 */
async function undoBlockedNavigations(session: BrowserSession, notes: SessionNotes): Promise<string[]> {
  const lines: string[] = [];
  for (const blocked of notes.blocked) {
    lines.push(`Blocked: the browser may not open ${blocked.url} (${blocked.reason}). Stay on allowed sites.`);
    const tab = session.tabs.find((candidate) => candidate.page === blocked.page);
    if (!tab) {
      // The first page of a new tab: the tab has nothing else to show.
      if (await session.closeRefusedNewTab(newTabWaitMs)) lines.push('The new tab it was to open in was closed.');
      continue;
    }
    const opened = notes.openedTabs.includes(tab);
    await tab.page.waitForURL(/^chrome-error:/, { timeout: errorPageWaitMs }).catch(() => undefined);
    if (opened) {
      await session.closeTab(tab.id);
      lines.push(`The new tab it was to open in was closed.`);
    } else if (tab.page.url().startsWith('chrome-error:')) {
      await tab.page.goBack({ waitUntil: 'domcontentloaded' }).catch(() => undefined);
    }
  }
  // A redirect is followed inside the browser without asking the rules; check where it ended.
  for (const tab of session.tabs) {
    const reason = await session.requestRefusal(tab.page.url());
    if (!reason) continue;
    const url = tab.page.url();
    await tab.page.goto('about:blank').catch(() => undefined);
    lines.push(`Blocked: tab [${tab.id}] was redirected to ${url} (${reason}); the tab now shows a blank page.`);
  }
  return lines;
}

/** Tabs a click opened become the active tab, as they would for a person. */
async function adoptOpenedTabs(session: BrowserSession, notes: SessionNotes): Promise<string[]> {
  const lines: string[] = [];
  for (const tab of notes.openedTabs) {
    if (!session.tabs.includes(tab)) continue;
    await tab.page.waitForLoadState('domcontentloaded', { timeout: session.settings.navigationTimeoutMs }).catch(() => undefined);
    session.switchTo(tab.id);
    lines.push(`The page opened a new tab [${tab.id}], now the active tab: ${await describePage(tab)}.`);
  }
  return lines;
}

async function elementListFor(tab: BrowserTab, session: BrowserSession): Promise<string> {
  try {
    const snapshot = await withTimeout(indexElements(tab.page, tab.numbering, session.settings.actionTimeoutMs), session.settings.actionTimeoutMs, 'listing the elements');
    const list = formatElementList(snapshot, elementListCharacters);
    return `Interactive elements on ${tab.page.url()} (use the number as index):\n${list.text}`;
  } catch (error) {
    return `The elements of the page could not be listed: ${errorMessage(error)}`;
  }
}
