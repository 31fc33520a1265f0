/**
 * One Chromium for every case that looks at what a person would see: a report or a chart page
 * opened by the user after the run. Launched on first use and closed once by the suite, so the
 * browser routes share it. The attacker's and the benign site's names resolve as the runtime's
 * test setting makes them.
 */
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { chromiumPath } from '../support/fixture-site.js';
import { chromiumArguments } from '../support/report-browser.js';
import { attackerHost, benignSiteHost } from './attack-configurations.js';

let browser: Promise<Browser> | undefined;

/** Opens a file as the user would, lets its scripts run for a moment, and closes the page. */
export async function openAsTheUser(file: string, settleMs = 1500): Promise<void> {
  browser ??= chromium.launch({
    executablePath: chromiumPath,
    args: [...chromiumArguments, `--host-resolver-rules=MAP ${attackerHost} 127.0.0.2, MAP ${benignSiteHost} 127.0.0.3`],
  });
  const page = await (await browser).newPage();
  try {
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load', timeout: 15_000 }).catch(() => undefined);
    await page.waitForTimeout(settleMs);
  } finally {
    await page.close();
  }
}

export async function closeSharedBrowser(): Promise<void> {
  const launched = browser;
  browser = undefined;
  if (launched) await (await launched).close();
}
