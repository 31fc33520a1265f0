/**
 * Starts Chromium for a session, or attaches to a running browser over CDP. Playwright gives a
 * launched browser a fresh temporary profile and removes it when the browser closes.
 */
import type { Browser, BrowserContext, BrowserContextOptions } from 'playwright-core';
import { errorMessage } from './browser-errors.js';
import { BrowserError } from './browser-errors.js';
import { chromiumArguments, chromiumPathVariable, type BrowserSettings } from './browser-settings.js';

export interface OpenedBrowser {
  browser: Browser;
  context: BrowserContext;
  /** False when attached over CDP: the browser belongs to someone else. */
  ownsBrowser: boolean;
}

export async function openBrowser(settings: BrowserSettings): Promise<OpenedBrowser> {
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
    // The browser's own context keeps its cookies and logins, which is why one attaches to it.
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
      // The runtime owns shutdown: Playwright's own handlers would exit the process on Ctrl-C
      // before the run could stop its tools and record the interruption.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
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

function firstLine(error: unknown): string {
  return errorMessage(error).split('\n')[0].trim();
}
