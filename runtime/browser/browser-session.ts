/**
 * One browser per run: started (or attached over CDP) on first use, its tabs numbered for the
 * model, its dialogs answered, its downloads saved into the workspace and its requests held to
 * the domain rules. Every action runs under a time limit; a page that crashed or stopped
 * responding is replaced by a blank tab and the action reports what happened.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, BrowserContextOptions, Dialog, Download, Page, Request, Route, WebSocketRoute } from 'playwright-core';
import { errorMessage } from '../errors.js';
import { resolveInWorkspace } from '../workspace-paths.js';
import { BrowserError } from './browser-errors.js';
import { chromiumArguments, chromiumPathVariable, type BrowserSettings } from './browser-settings.js';
import { newElementNumbering, type ElementNumbering } from './element-index.js';
import { formatSeconds, TimeLimitExceeded, withTimeout } from './time-limit.js';

export interface BrowserTab {
  readonly id: number;
  page: Page;
  numbering: ElementNumbering;
  crashed: boolean;
}

/** Things that happened on the side of an action, reported with its result. */
export interface SessionNotes {
  dialogs: string[];
  /** Workspace-relative paths of finished downloads. */
  downloads: string[];
  downloadProblems: string[];
  /** Navigations refused by the domain rules. */
  blocked: Array<{ url: string; reason: string; page?: Page }>;
  /** Tabs that pages opened (target=_blank, window.open). */
  openedTabs: BrowserTab[];
}

/** How long to wait for a hung page to answer, or to close, before giving up on it. */
const responsivenessProbeMs = 2000;
const closeTimeoutMs = 5000;

export class BrowserSession {
  readonly settings: BrowserSettings;
  readonly workspace: string;
  private readonly browser: Browser;
  private readonly context: BrowserContext;
  /** False when attached over CDP: the browser belongs to someone else; only our tabs are closed. */
  private readonly ownsBrowser: boolean;
  private readonly tabsById = new Map<number, BrowserTab>();
  private readonly pendingDownloads = new Set<Promise<void>>();
  private readonly reservedDownloadNames = new Set<string>();
  private notes: SessionNotes = emptyNotes();
  private nextTabId = 1;
  private downloadsStarted = 0;
  private readonly downloadWaiters: Array<() => void> = [];
  private readonly tabWaiters: Array<(tab: BrowserTab) => void> = [];
  private activeTabId: number | undefined;
  private disconnected = false;
  private closing = false;

  private constructor(settings: BrowserSettings, workspace: string, browser: Browser, context: BrowserContext, ownsBrowser: boolean) {
    this.settings = settings;
    this.workspace = workspace;
    this.browser = browser;
    this.context = context;
    this.ownsBrowser = ownsBrowser;
    browser.on('disconnected', () => {
      this.disconnected = true;
    });
  }

  static async start(settings: BrowserSettings, workspace: string): Promise<BrowserSession> {
    const { browser, context, ownsBrowser } = await openBrowser(settings);
    const session = new BrowserSession(settings, workspace, browser, context, ownsBrowser);
    try {
      context.setDefaultTimeout(settings.actionTimeoutMs);
      context.setDefaultNavigationTimeout(settings.navigationTimeoutMs);
      await session.confineFileUrls();
      if (settings.domainRules.active) await session.enforceDomainRules();
    } catch (error) {
      await session.close();
      throw error;
    }
    return session;
  }

  /** False once the browser has gone (crashed, closed, or the CDP connection dropped). */
  get usable(): boolean {
    return !this.disconnected && !this.closing && this.browser.isConnected();
  }

  get tabs(): BrowserTab[] {
    return [...this.tabsById.values()];
  }

  get activeTab(): BrowserTab | undefined {
    return this.activeTabId === undefined ? undefined : this.tabsById.get(this.activeTabId);
  }

  requireActiveTab(): BrowserTab {
    const tab = this.activeTab;
    if (!tab) throw new BrowserError('browser_no_page', 'No web page is open: open one with browser_use (action go_to_url or web_search).');
    return tab;
  }

  /** The active tab, opening a first one when there is none. */
  async activeOrNewTab(): Promise<BrowserTab> {
    return this.activeTab ?? this.openTab();
  }

  async openTab(): Promise<BrowserTab> {
    const page = await withTimeout(this.context.newPage(), this.settings.actionTimeoutMs, 'opening a tab');
    const tab = this.register(page);
    this.activeTabId = tab.id;
    return tab;
  }

  switchTo(id: number): BrowserTab {
    const tab = this.tabsById.get(id);
    if (!tab) throw new BrowserError('browser_action_failed', `There is no tab ${id}. Open tabs: ${this.tabList()}.`);
    this.activeTabId = id;
    // Switching is bookkeeping; bringing the page to the front only matters to a visible window.
    tab.page.bringToFront().catch(() => undefined);
    return tab;
  }

  async closeTab(id: number): Promise<void> {
    const tab = this.tabsById.get(id);
    if (!tab) throw new BrowserError('browser_action_failed', `There is no tab ${id}. Open tabs: ${this.tabList()}.`);
    this.forget(tab);
    await withTimeout(tab.page.close({ runBeforeUnload: false }), closeTimeoutMs, 'closing the tab').catch(() => undefined);
  }

  /**
   * Closes a new tab whose first page the rules refused. Chromium announces such a tab only
   * after showing its error page, so this waits up to `timeoutMs` for it to appear.
   */
  async closeRefusedNewTab(timeoutMs: number): Promise<boolean> {
    const refused = (tab: BrowserTab) => tab !== this.activeTab && /^(chrome-error:|about:blank)/.test(tab.page.url());
    let tab = this.tabs.find(refused);
    if (!tab) {
      const appeared = new Promise<BrowserTab>((resolve) => this.tabWaiters.push(resolve));
      tab = await withTimeout(appeared, timeoutMs, 'waiting for the new tab').catch(() => undefined);
    }
    if (!tab || !refused(tab)) return false;
    await this.closeTab(tab.id);
    return true;
  }

  tabList(): string {
    const tabs = this.tabs;
    return tabs.length === 0 ? 'none' : tabs.map((tab) => String(tab.id)).join(', ');
  }

  /** Returns what happened on the side since the last call, and starts collecting afresh. */
  takeNotes(): SessionNotes {
    const notes = this.notes;
    this.notes = emptyNotes();
    return notes;
  }

  /** How many downloads pages have started, so an action can tell whether it started one. */
  get downloadCount(): number {
    return this.downloadsStarted;
  }

  /** Waits up to `timeoutMs` for a download to start after `count` had started. */
  async waitForDownloadAfter(count: number, timeoutMs: number): Promise<boolean> {
    if (this.downloadsStarted > count) return true;
    const started = new Promise<void>((resolve) => this.downloadWaiters.push(resolve));
    return withTimeout(started, timeoutMs, 'waiting for the download').then(() => true, () => false);
  }

  /** Waits for downloads in progress to finish, up to `timeoutMs`. */
  async settleDownloads(timeoutMs: number): Promise<void> {
    if (this.pendingDownloads.size === 0) return;
    await withTimeout(Promise.all(this.pendingDownloads), timeoutMs, 'downloading').catch(() => undefined);
  }

  /**
   * Runs one action against the active tab under the action time limit. On a crash or a time-out
   * after which the page no longer answers, the tab is replaced and a BrowserError says so.
   */
  async run<T>(what: string, action: (tab: BrowserTab) => Promise<T>, options: { signal: AbortSignal; timeoutMs?: number }): Promise<T> {
    const tab = await this.activeOrNewTab();
    if (tab.crashed) {
      const url = tab.page.url();
      await this.replaceTab(tab);
      throw new BrowserError('browser_page_crashed', `The page ${url} had crashed; its tab was replaced by a blank one. Open the page again to continue.`);
    }
    const timeoutMs = options.timeoutMs ?? this.settings.actionTimeoutMs;
    try {
      return await withTimeout(action(tab), timeoutMs, what, options.signal);
    } catch (error) {
      if (options.signal.aborted) throw error;
      if (tab.crashed || /crash/i.test(errorMessage(error))) {
        const url = tab.page.url();
        await this.replaceTab(tab);
        throw new BrowserError('browser_page_crashed', `The page ${url} crashed while ${what}; its tab was replaced by a blank one. Open the page again, or try another page.`);
      }
      if (error instanceof TimeLimitExceeded || isPlaywrightTimeout(error)) await this.handleTimeout(tab, what, timeoutMs);
      throw error;
    }
  }

  /** Whether the page still runs scripts; a page stuck in a loop does not. */
  async isResponsive(tab: BrowserTab): Promise<boolean> {
    try {
      await withTimeout(tab.page.evaluate('1'), responsivenessProbeMs, 'checking the page');
      return true;
    } catch {
      return false;
    }
  }

  /** Closes our tabs, and the browser when we started it. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const pages = this.tabs.map((tab) => tab.page);
    this.tabsById.clear();
    this.activeTabId = undefined;
    if (this.ownsBrowser) {
      await withTimeout(this.browser.close(), closeTimeoutMs, 'closing the browser').catch(() => undefined);
      return;
    }
    await Promise.all(pages.map((page) => withTimeout(page.close({ runBeforeUnload: false }), closeTimeoutMs, 'closing a tab').catch(() => undefined)));
    // For a CDP connection this only disconnects; the browser and its other tabs stay.
    await withTimeout(this.browser.close(), closeTimeoutMs, 'disconnecting').catch(() => undefined);
  }

  private async handleTimeout(tab: BrowserTab, what: string, timeoutMs: number): Promise<never> {
    if (await this.isResponsive(tab)) {
      throw new BrowserError(
        'browser_timeout',
        `${capitalise(what)} did not finish within ${formatSeconds(timeoutMs)}. The page still responds: try again, wait for it, or take another way.`,
      );
    }
    return this.replaceHungTab(tab, what, timeoutMs);
  }

  /** Replaces a tab whose page no longer responds and throws the error that explains it. */
  async replaceHungTab(tab: BrowserTab, what: string, timeoutMs: number): Promise<never> {
    const limit = formatSeconds(timeoutMs);
    const url = tab.page.url();
    await this.replaceTab(tab);
    throw new BrowserError(
      'browser_timeout',
      `${capitalise(what)} did not finish within ${limit} and the page ${url} stopped responding (a script on it may be stuck in a loop). ` +
        `Its tab was closed and replaced by a blank one (tab ${tab.id}). Avoid that page, or open it again only if you must.`,
    );
  }

  /** A fresh page in place of a crashed or hung one, under the same tab id. */
  private async replaceTab(tab: BrowserTab): Promise<void> {
    const old = tab.page;
    let page: Page;
    try {
      page = await withTimeout(this.context.newPage(), this.settings.actionTimeoutMs, 'opening a replacement tab');
    } catch (error) {
      this.disconnected = true;
      throw new BrowserError('browser_unavailable', `The browser stopped responding (${errorMessage(error)}); it will be restarted on the next browser action.`);
    }
    tab.page = page;
    tab.numbering = newElementNumbering();
    tab.crashed = false;
    this.watch(tab, page);
    // A renderer stuck in a loop may never confirm; the tab is already replaced either way.
    withTimeout(old.close({ runBeforeUnload: false }), closeTimeoutMs, 'closing a hung tab').catch(() => undefined);
  }

  private register(page: Page): BrowserTab {
    const tab: BrowserTab = { id: this.nextTabId++, page, numbering: newElementNumbering(), crashed: false };
    this.tabsById.set(tab.id, tab);
    this.watch(tab, page);
    return tab;
  }

  private forget(tab: BrowserTab): void {
    this.tabsById.delete(tab.id);
    if (this.activeTabId === tab.id) this.activeTabId = this.tabs.at(-1)?.id;
  }

  private watch(tab: BrowserTab, page: Page): void {
    page.setDefaultTimeout(this.settings.actionTimeoutMs);
    page.setDefaultNavigationTimeout(this.settings.navigationTimeoutMs);
    page.on('dialog', (dialog) => this.answerDialog(dialog));
    page.on('download', (download) => this.saveDownload(download));
    page.on('popup', (popup) => {
      // A popup whose first navigation was blocked may already have been closed by the report.
      if (popup.isClosed()) return;
      const opened = this.register(popup);
      this.notes.openedTabs.push(opened);
      for (const wake of this.tabWaiters.splice(0)) wake(opened);
    });
    page.on('crash', () => {
      if (tab.page === page) tab.crashed = true;
    });
    page.on('close', () => {
      if (this.tabsById.get(tab.id)?.page === page) this.forget(tab);
    });
  }

  /** Dialogs block the page until answered; accept them, as a person clicking OK would, and say so. */
  private answerDialog(dialog: Dialog): void {
    if (dialog.type() !== 'beforeunload') this.notes.dialogs.push(`${dialog.type()}: "${dialog.message()}"`);
    dialog.accept().catch(() => undefined);
  }

  private saveDownload(download: Download): void {
    this.downloadsStarted += 1;
    for (const wake of this.downloadWaiters.splice(0)) wake();
    const saving = (async () => {
      const folder = resolveInWorkspace(this.workspace, this.settings.downloadsFolder, { access: 'write' });
      await mkdir(folder, { recursive: true });
      const target = this.reserveName(folder, download.suggestedFilename());
      try {
        await download.saveAs(target);
        this.notes.downloads.push(relative(this.workspace, target));
      } finally {
        this.reservedDownloadNames.delete(target);
      }
    })().catch((error: unknown) => {
      this.notes.downloadProblems.push(`${download.suggestedFilename()} (${download.url()}): ${errorMessage(error)}`);
    });
    this.pendingDownloads.add(saving);
    saving.finally(() => this.pendingDownloads.delete(saving));
  }

  /** A free name in the folder: `report.csv`, then `report (2).csv`, never overwriting a file. */
  private reserveName(folder: string, suggested: string): string {
    const safe = basename(suggested).replace(/[\u0000-\u001f/\\]/g, '_').replace(/^\.+/, '') || 'download';
    const extension = extname(safe);
    const stem = safe.slice(0, safe.length - extension.length);
    for (let attempt = 1; ; attempt += 1) {
      const name = attempt === 1 ? safe : `${stem} (${attempt})${extension}`;
      const candidate = resolveInWorkspace(this.workspace, join(folder, name), { access: 'write' });
      // Checked synchronously: the name is reserved before another download can look.
      if (!this.reservedDownloadNames.has(candidate) && !existsSync(candidate)) {
        this.reservedDownloadNames.add(candidate);
        return candidate;
      }
    }
  }

  /** Pages from file: URLs may show workspace files only, not the rest of the machine. */
  private async confineFileUrls(): Promise<void> {
    await this.context.route((url) => url.protocol === 'file:', (route: Route) => {
      const request = route.request();
      const reason = fileUrlRefusal(this.workspace, request.url());
      if (!reason) return route.continue().catch(() => undefined);
      if (isTopLevelNavigation(request)) this.notes.blocked.push({ url: request.url(), reason, page: pageOf(request) });
      return route.abort('accessdenied').catch(() => undefined);
    });
  }

  private async enforceDomainRules(): Promise<void> {
    const rules = this.settings.domainRules;
    await this.context.route('**/*', (route: Route) => {
      const request = route.request();
      const reason = rules.refusal(request.url());
      if (!reason) return route.continue().catch(() => undefined);
      if (isTopLevelNavigation(request)) this.notes.blocked.push({ url: request.url(), reason, page: pageOf(request) });
      return route.abort('blockedbyclient').catch(() => undefined);
    });
    await this.context.routeWebSocket(/.*/, (socket: WebSocketRoute) => {
      const reason = rules.refusal(socket.url());
      if (reason) socket.close({ code: 1008, reason: 'blocked by the browser domain rules' }).catch(() => undefined);
      else socket.connectToServer();
    });
  }
}

async function openBrowser(settings: BrowserSettings): Promise<{ browser: Browser; context: BrowserContext; ownsBrowser: boolean }> {
  const { chromium } = await import('playwright-core');
  if (settings.cdpUrl) {
    let browser: Browser;
    try {
      browser = await chromium.connectOverCDP(settings.cdpUrl, { timeout: settings.actionTimeoutMs });
    } catch (error) {
      throw new BrowserError(
        'browser_unavailable',
        `Could not attach to the browser at ${settings.cdpUrl}: ${firstLine(error)}. Check that it runs with --remote-debugging-port and that tool_settings.browser_use.cdp_url points at it.`,
      );
    }
    const context = browser.contexts()[0] ?? (await browser.newContext(contextOptions(settings, browser)));
    return { browser, context, ownsBrowser: false };
  }
  let browser: Browser;
  try {
    browser = await chromium.launch({
      executablePath: settings.executablePath,
      headless: settings.headless,
      args: [...chromiumArguments, ...settings.extraArgs],
      proxy: settings.proxy,
      timeout: settings.actionTimeoutMs,
    });
  } catch (error) {
    throw new BrowserError(
      'browser_unavailable',
      `Chromium could not be started from ${settings.executablePath}: ${firstLine(error)}. Install Chromium, or set ` +
        `tool_settings.browser_use.executable_path or ${chromiumPathVariable} to a Chromium or Chrome executable.`,
    );
  }
  try {
    return { browser, context: await browser.newContext(contextOptions(settings, browser)), ownsBrowser: true };
  } catch (error) {
    await browser.close().catch(() => undefined);
    throw new BrowserError('browser_unavailable', `The browser started but could not open a window: ${firstLine(error)}`);
  }
}

function contextOptions(settings: BrowserSettings, browser: Browser): BrowserContextOptions {
  return {
    viewport: settings.viewport,
    acceptDownloads: true,
    // Service workers answer requests themselves, out of the rules' reach.
    serviceWorkers: settings.domainRules.active ? 'block' : 'allow',
    // Many sites turn away a user agent that says "HeadlessChrome".
    userAgent: settings.headless ? desktopUserAgent(browser.version()) : undefined,
  };
}

function desktopUserAgent(version: string): string {
  const major = version.split('.')[0];
  const platform = process.platform === 'darwin'
    ? 'Macintosh; Intel Mac OS X 10_15_7'
    : process.platform === 'win32' ? 'Windows NT 10.0; Win64; x64' : 'X11; Linux x86_64';
  return `Mozilla/5.0 (${platform}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Safari/537.36`;
}

/** Why a file: URL may not be opened, or undefined when it names a file inside the workspace. */
export function fileUrlRefusal(workspace: string, url: string): string | undefined {
  try {
    resolveInWorkspace(workspace, fileURLToPath(url), { access: 'read' });
    return undefined;
  } catch (error) {
    return `file: URLs may only show files inside the workspace (${errorMessage(error)})`;
  }
}

/** A page's own navigation, not a frame's or a resource's: the ones worth telling the model about. */
function isTopLevelNavigation(request: Request): boolean {
  if (!request.isNavigationRequest()) return false;
  try {
    return request.frame().parentFrame() === null;
  } catch {
    // The first navigation of a new tab comes before its frame exists.
    return true;
  }
}

function pageOf(request: Request): Page | undefined {
  try {
    return request.frame().page();
  } catch {
    return undefined;
  }
}

function isPlaywrightTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

function firstLine(error: unknown): string {
  return errorMessage(error).split('\n')[0].trim();
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function emptyNotes(): SessionNotes {
  return { dialogs: [], downloads: [], downloadProblems: [], blocked: [], openedTabs: [] };
}
