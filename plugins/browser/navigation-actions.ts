/**
 * Actions that load a page: go_to_url, go_back, refresh, and the wait action. A page that loads
 * slowly is shown as far as it got; a page that stops responding is replaced (BrowserSession).
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Response } from 'playwright-core';
import { errorMessage } from './browser-errors.js';
import { BrowserError } from './browser-errors.js';
import type { BrowserSession, BrowserTab } from './browser-session.js';
import { fileUrlRefusal } from './request-rules.js';
import { formatSeconds, withTimeout } from './time-limit.js';

/** Pages usually finish loading soon after their DOM is ready; waiting longer rarely pays off. */
const loadGraceMs = 2000;
const downloadStartWaitMs = 2000;

/** The URL to open: a bare host gets https://; only http(s), about:blank and workspace files are opened. */
export function navigableUrl(session: BrowserSession, requested: string): string {
  const text = requested.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:/i.test(text) ? text : `https://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new BrowserError('browser_action_failed', `"${requested}" is not a URL. Give a full address like https://example.org/page.`);
  }
  if (url.href === 'about:blank') return url.href;
  if (url.protocol === 'file:') {
    const refusal = fileUrlRefusal(session.files, url.href);
    if (refusal) throw new BrowserError('browser_domain_blocked', `Cannot open ${url.href}: ${refusal}.`);
    return url.href;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BrowserError('browser_action_failed', `Cannot open ${url.href}: the browser opens http and https pages and files in the workspace only.`);
  }
  const refusal = session.settings.domainRules.refusal(url.href);
  if (refusal) throw new BrowserError('browser_domain_blocked', `Navigation to ${url.href} is blocked: ${refusal}. Choose a page on an allowed site.`);
  return url.href;
}

export async function goToUrl(session: BrowserSession, tab: BrowserTab, requested: string): Promise<string> {
  const url = navigableUrl(session, requested);
  if (url.startsWith('file:')) await session.allowWorkspaceFiles();
  return loadPage(session, tab, { doing: `opening ${url}`, done: 'Opened the page' }, () => tab.page.goto(url, { waitUntil: 'domcontentloaded' }));
}

export async function goBack(session: BrowserSession, tab: BrowserTab): Promise<string> {
  const before = tab.page.url();
  const result = await loadPage(session, tab, { doing: 'going back', done: 'Went back' }, () => tab.page.goBack({ waitUntil: 'domcontentloaded' }));
  return tab.page.url() === before ? 'There is no earlier page in this tab to go back to.' : result;
}

export async function refresh(session: BrowserSession, tab: BrowserTab): Promise<string> {
  return loadPage(session, tab, { doing: 'reloading the page', done: 'Reloaded the page' }, () => tab.page.reload({ waitUntil: 'domcontentloaded' }));
}

export async function waitFor(tab: BrowserTab, seconds: number, signal: AbortSignal): Promise<string> {
  await delay(seconds * 1000, undefined, { signal });
  return `Waited ${formatSeconds(seconds * 1000)}. Now at ${await describePage(tab)}.`;
}

/** `"Title" — URL`, with a page that cannot say its title still described by its URL. */
export async function describePage(tab: BrowserTab): Promise<string> {
  const title = await withTimeout(tab.page.title(), 1000, 'reading the title').catch(() => '');
  return `"${title.trim() || 'untitled'}" — ${tab.page.url()}`;
}

interface LoadLabels {
  /** For messages about an unfinished load: "opening https://...". */
  doing: string;
  /** For the result: "Opened the page". */
  done: string;
}

async function loadPage(session: BrowserSession, tab: BrowserTab, labels: LoadLabels, navigate: () => Promise<Response | null>): Promise<string> {
  const downloadsBefore = session.downloadCount;
  let response: Response | null;
  try {
    response = await navigate();
  } catch (error) {
    return explainFailedLoad(session, tab, labels.doing, error, downloadsBefore);
  }
  await tab.page.waitForLoadState('load', { timeout: loadGraceMs }).catch(() => undefined);
  const status = response?.status() ?? 0;
  const statusNote = status >= 400 ? ` The server answered with status ${status}${response?.statusText() ? ` ${response.statusText()}` : ''}.` : '';
  return `${labels.done}: now at ${await describePage(tab)}.${statusNote}`;
}

async function explainFailedLoad(session: BrowserSession, tab: BrowserTab, what: string, error: unknown, downloadsBefore: number): Promise<string> {
  const message = errorMessage(error);
  // Chromium reports a download as an aborted navigation; the download event may come a moment later.
  if (/download is starting|ERR_ABORTED/i.test(message) && (await session.waitForDownloadAfter(downloadsBefore, downloadStartWaitMs))) {
    return `${capitalise(what)} started a download instead of showing a page; the file is reported below.`;
  }
  if (error instanceof Error && error.name === 'TimeoutError') {
    const limit = session.settings.navigationTimeoutMs;
    if (!(await session.isResponsive(tab))) return session.replaceHungTab(tab, what, limit);
    return `${capitalise(what)}: the page had not finished loading after ${formatSeconds(limit)}; showing what has loaded so far. Now at ${await describePage(tab)}.`;
  }
  if (/ERR_BLOCKED_BY_CLIENT|ERR_ACCESS_DENIED/.test(message)) {
    return `${capitalise(what)} was stopped by the browser's rules; see below.`;
  }
  throw new BrowserError('browser_action_failed', `${capitalise(what)} failed: ${message.split('\n')[0]}`);
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
