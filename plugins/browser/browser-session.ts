/**
 * One browser per run: started (or attached over CDP) on first use, its tabs numbered for the
 * model, its dialogs answered, its downloads saved into the workspace and its requests held to
 * the rules. Every action runs under a time limit; a page that crashed or stopped responding is
 * replaced by a blank tab and the action reports what happened.
 */
import type { ToolContext } from 'manus-runtime';
import type { Browser, BrowserContext, Dialog, Page, Request } from 'playwright-core';
import { errorMessage } from './browser-errors.js';
import { BrowserError } from './browser-errors.js';
import { openBrowser } from './browser-launch.js';
import type { WorkspaceFiles } from './workspace-files.js';
import type { BrowserSettings } from './browser-settings.js';
import { DownloadStore } from './download-store.js';
import { newElementNumbering, type ElementNumbering } from './element-index.js';
import { confineFileUrls, enforceDomainRules, pageOf, requestRefusal, type RefusedNavigation, type RequestRuleOptions } from './request-rules.js';
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
  /** Navigations the rules refused. */
  blocked: RefusedNavigation[];
  /** Tabs that pages opened (target=_blank, window.open). */
  openedTabs: BrowserTab[];
}

/** How long a hung page gets to answer, or to close, before it is given up. */
const responsivenessProbeMs = 2000;
const closeTimeoutMs = 5000;

export class BrowserSession {
  readonly settings: BrowserSettings;
  readonly workspace: string;
  /** Where the session may read and write files: the run's workspace, minus its protected paths. */
  readonly files: WorkspaceFiles;
  private readonly browser: Browser;
  private readonly context: BrowserContext;
  /** False when attached over CDP: then only our own tabs are closed, and rules go on our tabs only. */
  private readonly ownsBrowser: boolean;
  /** The run's network: private addresses are refused unless the user allows them. */
  private readonly network: ToolContext['network'];
  private readonly downloads: DownloadStore;
  private readonly tabsById = new Map<number, BrowserTab>();
  private readonly tabWaiters: Array<(tab: BrowserTab) => void> = [];
  private notes = emptyNotes();
  private nextTabId = 1;
  private popupsOpened = 0;
  private activeTabId: number | undefined;
  private fileUrlsConfined = false;
  private queue: Promise<unknown> = Promise.resolve();
  private disconnected = false;
  private closing = false;

  private constructor(settings: BrowserSettings, files: WorkspaceFiles, browser: Browser, context: BrowserContext, ownsBrowser: boolean, network: ToolContext['network']) {
    this.settings = settings;
    this.network = network;
    this.workspace = files.root;
    this.files = files;
    this.browser = browser;
    this.context = context;
    this.ownsBrowser = ownsBrowser;
    this.downloads = new DownloadStore(files, settings.downloadsFolder);
    browser.on('disconnected', () => {
      this.disconnected = true;
    });
  }

  static async start(settings: BrowserSettings, files: WorkspaceFiles, network: ToolContext['network']): Promise<BrowserSession> {
    const { browser, context, ownsBrowser } = await openBrowser(await withEgressProxy(settings, network));
    const session = new BrowserSession(settings, files, browser, context, ownsBrowser, network);
    try {
      context.setDefaultTimeout(settings.actionTimeoutMs);
      context.setDefaultNavigationTimeout(settings.navigationTimeoutMs);
      if (ownsBrowser && session.requestsChecked) await enforceDomainRules(context, session.ruleOptions());
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

  async openTab(): Promise<BrowserTab> {
    const page = await withTimeout(this.context.newPage(), this.settings.actionTimeoutMs, 'opening a tab');
    const tab = await this.register(page);
    this.activeTabId = tab.id;
    return tab;
  }

  switchTo(id: number): BrowserTab {
    const tab = this.tabsById.get(id);
    if (!tab) throw new BrowserError('browser_action_failed', `There is no tab ${id}. Open tabs: ${this.tabList()}.`);
    this.activeTabId = id;
    // For a headless browser switching is bookkeeping; the front only matters to a visible window.
    tab.page.bringToFront().catch(() => undefined);
    return tab;
  }

  async closeTab(id: number): Promise<void> {
    const tab = this.tabsById.get(id);
    if (!tab) throw new BrowserError('browser_action_failed', `There is no tab ${id}. Open tabs: ${this.tabList()}.`);
    this.forget(tab);
    await withTimeout(tab.page.close({ runBeforeUnload: false }), closeTimeoutMs, 'closing the tab').catch(() => undefined);
  }

  /** Called before a file: URL is opened; see confineFileUrls for why not sooner. */
  async allowWorkspaceFiles(): Promise<void> {
    if (this.fileUrlsConfined) return;
    this.fileUrlsConfined = true;
    const targets = this.ownsBrowser ? [this.context] : this.tabs.map((tab) => tab.page);
    await Promise.all(targets.map((target) => confineFileUrls(target, this.ruleOptions())));
  }

  tabList(): string {
    const tabs = this.tabs;
    return tabs.length === 0 ? 'none' : tabs.map((tab) => String(tab.id)).join(', ');
  }

  /**
   * Starts noticing tabs that pages begin to open. Chromium sends a new tab's first request
   * well before the tab is announced; an action that waits on `settle` reports the tab
   * instead of leaving it for the next action to find.
   */
  watchNewTabs(): { settle(timeoutMs: number): Promise<void> } {
    const openedBefore = this.popupsOpened;
    let expected = 0;
    const onRequest = (request: Request) => {
      if (request.isNavigationRequest() && pageOf(request) === undefined) expected += 1;
    };
    this.context.on('request', onRequest);
    return {
      settle: async (timeoutMs: number) => {
        this.context.off('request', onRequest);
        const deadline = Date.now() + timeoutMs;
        while (this.popupsOpened - openedBefore < expected && Date.now() < deadline) {
          if (!(await this.nextNewTab(deadline - Date.now()))) break;
        }
      },
    };
  }

  /**
   * Closes a new tab whose first page the rules refused. Chromium announces such a tab only
   * after showing its error page, so this waits up to `timeoutMs` for it to appear.
   */
  async closeRefusedNewTab(timeoutMs: number): Promise<boolean> {
    const refused = (tab: BrowserTab) => tab !== this.activeTab && /^(chrome-error:|about:blank)/.test(tab.page.url());
    const tab = this.tabs.find(refused) ?? (await this.nextNewTab(timeoutMs));
    if (!tab || !refused(tab)) return false;
    await this.closeTab(tab.id);
    return true;
  }

  /** What happened on the side since the last call; collecting starts afresh. */
  takeNotes(): SessionNotes {
    const notes = this.notes;
    this.notes = emptyNotes();
    const downloads = this.downloads.take();
    return { ...notes, downloads: downloads.files, downloadProblems: downloads.problems };
  }

  /** How many downloads pages have started, so an action can tell whether it started one. */
  get downloadCount(): number {
    return this.downloads.count;
  }

  waitForDownloadAfter(count: number, timeoutMs: number): Promise<boolean> {
    return this.downloads.waitForStartAfter(count, timeoutMs);
  }

  settleDownloads(timeoutMs: number): Promise<void> {
    return this.downloads.settle(timeoutMs);
  }

  /**
   * Runs `work` after the work queued before it. The kernel keeps calls to one tool from
   * overlapping; this keeps browser_use and extract_content, which share the page, from
   * overlapping each other. Not re-entrant: work must not queue more work.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /**
   * Runs one action against the active tab (opening one if none is open) under the action time
   * limit. On a crash, or a time-out after which the page no longer answers, the tab is
   * replaced and a BrowserError says so.
   */
  async run<T>(what: string, action: (tab: BrowserTab) => Promise<T>, options: { signal: AbortSignal; timeoutMs?: number }): Promise<T> {
    const tab = this.activeTab ?? (await this.openTab());
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
      if (tab.crashed || /Target crashed|Page crashed/i.test(errorMessage(error))) {
        const url = tab.page.url();
        await this.replaceTab(tab);
        throw new BrowserError('browser_page_crashed', `The page ${url} crashed while ${what}; its tab was replaced by a blank one. Open the page again, or try another page.`);
      }
      if (error instanceof TimeLimitExceeded || isPlaywrightTimeout(error)) await this.handleTimeout(tab, what, error as Error);
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

  /** Replaces a tab whose page no longer responds and throws the error that explains it. */
  async replaceHungTab(tab: BrowserTab, what: string, timeoutMs: number): Promise<never> {
    const url = tab.page.url();
    await this.replaceTab(tab);
    throw new BrowserError(
      'browser_timeout',
      `${capitalise(what)} did not finish within ${formatSeconds(timeoutMs)} and the page ${url} stopped responding ` +
        `(a script on it may be stuck in a loop). Its tab was closed and replaced by a blank one (tab ${tab.id}). ` +
        'Avoid that page, or open it again only if you must.',
    );
  }

  /** Closes our tabs, and the browser when we started it. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const pages = this.tabs.map((tab) => tab.page);
    this.tabsById.clear();
    this.activeTabId = undefined;
    if (!this.ownsBrowser) {
      await Promise.all(pages.map((page) => withTimeout(page.close({ runBeforeUnload: false }), closeTimeoutMs, 'closing a tab').catch(() => undefined)));
    }
    // For a CDP connection this only disconnects; the browser and its other tabs stay.
    await withTimeout(this.browser.close(), closeTimeoutMs, 'closing the browser').catch(() => undefined);
  }

  private async handleTimeout(tab: BrowserTab, what: string, error: Error): Promise<never> {
    if (await this.isResponsive(tab)) {
      const detail = error instanceof TimeLimitExceeded ? `did not finish within ${formatSeconds(error.timeoutMs)}` : `timed out (${firstLine(error)})`;
      throw new BrowserError('browser_timeout', `${capitalise(what)} ${detail}. The page still responds: try again, wait for it, or take another way.`);
    }
    const timeoutMs = error instanceof TimeLimitExceeded ? error.timeoutMs : this.settings.actionTimeoutMs;
    return this.replaceHungTab(tab, what, timeoutMs);
  }

  /** A fresh page in place of a crashed or hung one, under the same tab number. */
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
    await this.watch(tab, page);
    // A renderer stuck in a loop may never confirm; the tab is replaced either way.
    withTimeout(old.close({ runBeforeUnload: false }), closeTimeoutMs, 'closing a hung tab').catch(() => undefined);
  }

  private async register(page: Page): Promise<BrowserTab> {
    const tab: BrowserTab = { id: this.nextTabId++, page, numbering: newElementNumbering(), crashed: false };
    this.tabsById.set(tab.id, tab);
    await this.watch(tab, page);
    return tab;
  }

  private forget(tab: BrowserTab): void {
    this.tabsById.delete(tab.id);
    if (this.activeTabId === tab.id) this.activeTabId = this.tabs.at(-1)?.id;
  }

  private async watch(tab: BrowserTab, page: Page): Promise<void> {
    page.on('dialog', (dialog) => this.answerDialog(dialog));
    page.on('download', (download) => this.downloads.save(download));
    page.on('popup', (popup) => this.adoptPopup(popup));
    page.on('crash', () => {
      if (tab.page === page) tab.crashed = true;
    });
    page.on('close', () => {
      if (this.tabsById.get(tab.id)?.page === page) this.forget(tab);
    });
    // On someone else's browser the rules go on our tabs only, not on the whole context.
    if (this.ownsBrowser) return;
    if (this.requestsChecked) await enforceDomainRules(page, this.ruleOptions());
    if (this.fileUrlsConfined) await confineFileUrls(page, this.ruleOptions());
  }

  private adoptPopup(popup: Page): void {
    // A popup whose first page was refused may already have been closed by the report.
    if (popup.isClosed()) return;
    this.register(popup).then((tab) => {
      this.popupsOpened += 1;
      this.notes.openedTabs.push(tab);
      for (const wake of this.tabWaiters.splice(0)) wake(tab);
    }, () => undefined);
  }

  private nextNewTab(timeoutMs: number): Promise<BrowserTab | undefined> {
    const appeared = new Promise<BrowserTab>((resolve) => this.tabWaiters.push(resolve));
    return withTimeout(appeared, timeoutMs, 'waiting for a new tab').catch(() => undefined);
  }

  /** Dialogs block the page until answered; accept them, as a person clicking OK would, and say so. */
  private answerDialog(dialog: Dialog): void {
    if (dialog.type() !== 'beforeunload') this.notes.dialogs.push(`${dialog.type()}: "${dialog.message()}"`);
    dialog.accept().catch(() => undefined);
  }

  /** Why the rules refuse a request to `url` (its domain, or its private address), or undefined. */
  requestRefusal(url: string): Promise<string | undefined> {
    return requestRefusal(url, this.ruleOptions());
  }

  /** Whether requests go through the rules: with domain rules, and whenever private addresses are refused. */
  private get requestsChecked(): boolean {
    return this.settings.domainRules.active || !this.network.allowPrivate;
  }

  private ruleOptions(): RequestRuleOptions {
    return {
      files: this.files,
      domainRules: this.settings.domainRules,
      checkHost: this.network.allowPrivate ? undefined : this.network.checkHost,
      onRefused: (navigation) => this.notes.blocked.push(navigation),
    };
  }
}

function isPlaywrightTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

function firstLine(error: Error): string {
  return error.message.split('\n')[0].trim();
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function emptyNotes(): SessionNotes {
  return { dialogs: [], downloads: [], downloadProblems: [], blocked: [], openedTabs: [] };
}

/**
 * A run that may reach only named hosts sends the browser through the run's egress proxy, on its
 * loopback port with the run's credential, loopback included (Chromium would otherwise go
 * straight to it), WebRTC too. A browser the run attaches to was started elsewhere, with its own network.
 */
async function withEgressProxy(settings: BrowserSettings, network: ToolContext['network']): Promise<BrowserSettings> {
  if (!network.egress) return settings;
  if (settings.cdpUrl !== undefined) {
    throw new BrowserError(
      'browser_unavailable',
      `this run may reach only ${network.egress.hosts.join(', ')}, and a browser it attaches to (tool_settings.browser_use.cdp_url) cannot be held to that list; leave cdp_url out to launch one that is.`,
    );
  }
  const proxy = await (await network.egress.proxy()).browser();
  // WebRTC sends UDP (STUN, TURN, the peers' own) straight out, past any HTTP proxy: a page could
  // reach any address in its ICE candidates. Chromium's policy leaves it only proxied TCP.
  return { ...settings, proxy: { ...proxy, bypass: '<-loopback>' }, extraArgs: [...settings.extraArgs, '--webrtc-ip-handling-policy=disable_non_proxied_udp'] };
}
