import { describe, expect, it } from 'vitest';
import browserState from '../plugins/browser/browser_state.js';
import type { ContextProviderInput } from '../runtime/contract/context-provider.js';
import { existingBrowserSession } from '../plugins/browser/session-registry.js';
import { chromiumMissing as isChromiumMissing, useFixtureSite } from './support/fixture-site.js';
import { useBrowserTool } from './support/browser-tool.js';
import type { TestToolContext } from './support/tool-context.js';

const chromiumMissing = isChromiumMissing('browser_state');

type TestContext = TestToolContext;

const site = useFixtureSite();
const { browserContext, act } = useBrowserTool();

async function render(test: TestContext, overrides: Partial<ContextProviderInput> = {}) {
  return browserState.render({
    runId: 'test-run',
    workspace: test.context.workspace,
    runDirectory: test.context.runDirectory,
    step: 2,
    recentTools: new Set(['browser_use']),
    resources: test.context.resources,
    signal: new AbortController().signal,
    vision: false,
    settings: {},
    ...overrides,
  });
}

/** Width and height from a JPEG's start-of-frame segment. */
function jpegSize(bytes: Buffer): { width: number; height: number } {
  let offset = 2;
  while (offset < bytes.length) {
    const marker = bytes.readUInt16BE(offset);
    const length = bytes.readUInt16BE(offset + 2);
    if (marker >= 0xffc0 && marker <= 0xffc2) return { height: bytes.readUInt16BE(offset + 5), width: bytes.readUInt16BE(offset + 7) };
    offset += 2 + length;
  }
  throw new Error('no frame header in the JPEG');
}

describe.skipIf(chromiumMissing)(`browser_state${chromiumMissing ? ' (skipped: no Chromium)' : ''}`, () => {
  it('stays quiet and starts no browser when none is running', async () => {
    const test = browserContext();
    expect(await render(test)).toBeUndefined();
    expect(existingBrowserSession(test.context.resources)).toBeUndefined();
  });

  it('stays quiet when the browser was not used in the recent turns', async () => {
    const test = browserContext();
    await act(test, { action: 'go_to_url', url: `${site.origin}/form.html` });
    expect(await render(test, { recentTools: new Set(['bash', 'terminate']) })).toBeUndefined();
    expect((await render(test, { recentTools: new Set(['extract_content']) }))?.text).toContain('URL: ');
  });

  it('shows the URL, title, tabs, scroll position and numbered elements', async () => {
    const test = browserContext({ viewport: { width: 1000, height: 400 } });
    await act(test, { action: 'go_to_url', url: `${site.origin}/tabs.html` });
    await act(test, { action: 'open_tab', url: `${site.origin}/article.html` });
    const state = await render(test);
    const text = state!.text!;
    expect(text).toContain(`URL: ${site.origin}/article.html`);
    expect(text).toContain('Title: Glass frogs of the cloud forest');
    expect(text).toContain(`Tabs: [1] Reading list — ${site.origin}/tabs.html; [2] (active) Glass frogs of the cloud forest — ${site.origin}/article.html`);
    expect(text).toMatch(/Scroll: 0 px above the view, \d+ px below \(0% scrolled\)/);
    expect(text).toContain('[2]<a href="/index.html">Home</a>');
    expect(text).toContain('[6]<button type="button">Accept all cookies</button>');
    expect(state!.images).toBeUndefined();
  });

  it('keeps the element list within its budget, nearest elements first, and says how to see the rest', async () => {
    const test = browserContext({ viewport: { width: 1000, height: 500 } });
    await act(test, { action: 'go_to_url', url: `${site.origin}/scroll.html` });
    const top = (await render(test, { settings: { max_characters: 1200 } }))!.text!;
    expect(top.length).toBeLessThanOrEqual(1200);
    expect(top).toContain('[1]<a href="/article.html#species-1">Details for species 1</a>');
    expect(top).toMatch(/\.\.\. \d+ more elements not listed to keep this short: \d+ below the view \(scroll_down to list them\)\./);
    expect(top).not.toContain('species 60</a>');

    await act(test, { action: 'scroll_to_text', text: 'password for the night walk' });
    const bottom = (await render(test, { settings: { max_characters: 1200 } }))!.text!;
    expect(bottom).toContain('[60]<a href="/article.html#species-60">Details for species 60</a>');
    expect(bottom).toMatch(/\d+ above the view \(scroll_up to list them\)/);
    expect(bottom).toMatch(/Scroll: \d+ px above the view, 0 px below \(100% scrolled\)/);
  });

  it('sends a JPEG of the view with the numbers drawn on, to vision models only', async () => {
    const test = browserContext({ viewport: { width: 900, height: 500 } });
    await act(test, { action: 'go_to_url', url: `${site.origin}/scroll.html` });
    expect((await render(test, { vision: false }))!.images).toBeUndefined();
    const state = await render(test, { vision: true });
    const [image] = state!.images!;
    expect(image.mimeType).toBe('image/jpeg');
    const bytes = Buffer.from(image.data, 'base64');
    expect(bytes.subarray(0, 2).toString('hex')).toBe('ffd8');
    expect(jpegSize(bytes)).toEqual({ width: 900, height: 500 });
    const page = existingBrowserSession(test.context.resources)!.activeTab!.page;
    expect(await page.evaluate("document.getElementById('manus-element-highlights')")).toBeNull();
    expect((await render(test, { vision: true, settings: { screenshot: false } }))!.images).toBeUndefined();
  });

  it('reports a page that stopped responding without holding up the step', async () => {
    const test = browserContext();
    await act(test, { action: 'go_to_url', url: `${site.origin}/hang.html` });
    const page = existingBrowserSession(test.context.resources)!.activeTab!.page;
    await page.evaluate('setTimeout(() => { for (;;) {} }, 0)');
    const started = Date.now();
    const state = await render(test);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(state!.text).toContain('The page is not responding, so its elements cannot be listed.');
    expect(state!.text).toContain(`URL: ${site.origin}/hang.html`);
  });

  it('makes browser_use leave the element list out of its results once it is active', async () => {
    const test = browserContext();
    const before = await act(test, { action: 'go_to_url', url: `${site.origin}/form.html` });
    expect(before.content).toContain('Interactive elements on');
    await render(test);
    const after = await act(test, { action: 'go_to_url', url: `${site.origin}/tabs.html` });
    expect(after.content).not.toContain('Interactive elements');
    expect(after.content).toContain('"Reading list"');
  });

  it('refuses settings it does not know', async () => {
    const test = browserContext();
    await expect(render(test, { settings: { screenshots: false } })).rejects.toThrow("tool_settings.browser_state has an unknown key 'screenshots' (did you mean 'screenshot'?)");
    await expect(render(test, { settings: { screenshot_quality: 101 } })).rejects.toThrow('screenshot_quality must be from 1 to 100');
  });
});
