/**
 * For tests that look at generated reports the way a person would: a real Chromium through
 * Playwright, one per test file, and a folder for the screenshots kept as test artifacts.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll } from 'vitest';
import { chromiumPath } from './fixture-site.js';
import { repositoryRoot } from './run-cli.js';

export const chromiumArguments = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

/** Screenshots of what the tests looked at; the folder is ignored by git. */
export const artifactsFolder = join(repositoryRoot, 'test', 'artifacts', 'view');

export function useReportBrowser() {
  let browser: Browser | undefined;
  afterAll(() => browser?.close());
  return {
    /** A fresh page; errors the page's scripts throw are collected in `errors`. */
    async newPage(): Promise<{ page: Page; errors: string[] }> {
      browser ??= await chromium.launch({ executablePath: chromiumPath, args: chromiumArguments });
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      return { page, errors };
    },
  };
}

export async function keepScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(artifactsFolder, { recursive: true });
  const file = join(artifactsFolder, `${name}.png`);
  // Steps out of view are not drawn until scrolled to; a picture of the whole page needs them all.
  await page.addStyleTag({ content: 'li.step { content-visibility: visible !important; }' });
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
