/**
 * browser_use's part of `manus doctor`: whether the Chromium its settings name starts here (it is
 * launched headless and closed again), or whether the browser it attaches to over CDP answers.
 */
import type { DoctorContext, DoctorFinding } from 'manus-runtime';
import { chromiumArguments, chromiumPathVariable, readBrowserSettings } from './browser-settings.js';

const launchTimeoutMs = 15_000;

export async function checkBrowser(settings: Record<string, unknown>, context: DoctorContext): Promise<DoctorFinding[]> {
  let browserSettings;
  try {
    browserSettings = readBrowserSettings(settings, context.environment);
  } catch (error) {
    return [{ check: 'chromium', status: 'missing', detail: (error as Error).message, fix: 'correct tool_settings.browser_use' }];
  }
  if (browserSettings.cdpUrl) return [await checkAttachedBrowser(browserSettings.cdpUrl, context)];
  const path = browserSettings.executablePath;
  const source = settings.executable_path !== undefined ? 'tool_settings.browser_use.executable_path' : context.environment[chromiumPathVariable] ? chromiumPathVariable : 'the default';
  const { chromium } = await import('playwright-core');
  try {
    const browser = await chromium.launch({
      executablePath: path,
      headless: true,
      args: [...chromiumArguments, ...browserSettings.extraArgs],
      timeout: launchTimeoutMs,
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
    const version = browser.version();
    await browser.close();
    return [{ check: 'chromium', status: 'ok', detail: `${path} (${source}) starts: Chromium ${version}` }];
  } catch (error) {
    return [{
      check: 'chromium',
      status: 'missing',
      detail: `${path} (${source}) does not start: ${(error as Error).message.split('\n')[0]}`,
      fix: `install Chromium (apt-get install chromium), or set ${chromiumPathVariable} or tool_settings.browser_use.executable_path to a Chromium or Chrome executable`,
    }];
  }
}

async function checkAttachedBrowser(cdpUrl: string, context: DoctorContext): Promise<DoctorFinding> {
  const versionUrl = `${cdpUrl.replace(/^ws/, 'http').replace(/\/devtools\/.*$/, '').replace(/\/+$/, '')}/json/version`;
  try {
    const response = await fetch(versionUrl, { signal: AbortSignal.any([context.signal, AbortSignal.timeout(5000)]) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const body = (await response.json()) as { Browser?: string };
    return { check: 'chromium', status: 'ok', detail: `the browser at ${cdpUrl} (tool_settings.browser_use.cdp_url) answers: ${body.Browser ?? 'unknown version'}` };
  } catch (error) {
    return {
      check: 'chromium',
      status: 'missing',
      detail: `the browser at ${cdpUrl} (tool_settings.browser_use.cdp_url) does not answer: ${(error as Error).message}`,
      fix: 'start it with --remote-debugging-port, or correct tool_settings.browser_use.cdp_url',
    };
  }
}
