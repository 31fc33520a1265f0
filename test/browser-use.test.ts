import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import browserUse from '../plugins/browser/browser_use.js';
import { renderBrowserState } from '../plugins/browser/browser-state.js';
import { DomainRules } from '../plugins/browser/domain-rules.js';
import { readBrowserSettings } from '../plugins/browser/browser-settings.js';
import { existingBrowserSession, markStateProviderActive } from '../plugins/browser/session-registry.js';
import { chromiumMissing as isChromiumMissing, chromiumPath, startFixtureSite, useFixtureSite } from './support/fixture-site.js';
import { makeFixture, privateNetworkConfigHome, readEvents, runCli } from './support/run-cli.js';
import { startScriptedModelServer, type RecordedChatRequest, type ScriptedTurn } from './support/scripted-model-server.js';
import { toolMessages } from './support/loop-fixture.js';
import { useBrowserTool } from './support/browser-tool.js';
import { createTestToolContext, type TestToolContext } from './support/tool-context.js';
import { createToolNetwork } from '../runtime/services/network/tool-network.js';

const chromiumMissing = isChromiumMissing('browser_use');

type TestContext = TestToolContext;

const site = useFixtureSite();
const { newContext, browserContext, act } = useBrowserTool();

async function thrown(test: TestContext, input: Record<string, unknown>): Promise<string> {
  try {
    await browserUse.execute(input as never, test.context);
    return 'nothing was thrown';
  } catch (error) {
    return String(error);
  }
}

function activePage(test: TestContext) {
  return existingBrowserSession(test.context.resources)!.activeTab!.page;
}

/** The number the element list gives the element whose line contains `text`. */
function indexOf(listing: string, text: string): number {
  const line = listing.split('\n').find((candidate) => /^\[\d+\]</.test(candidate) && candidate.includes(text));
  if (!line) throw new Error(`no element with ${JSON.stringify(text)} in:\n${listing}`);
  return Number(/^\[(\d+)\]/.exec(line)![1]);
}

describe.skipIf(chromiumMissing)(`browser_use${chromiumMissing ? ' (skipped: no Chromium)' : ''}`, () => {
  it('fills and submits a form by element numbers: text, drop-down, check box', async () => {
    const test = browserContext();
    const opened = await act(test, { action: 'go_to_url', url: `${site.origin}/form.html` });
    expect(opened.isError).toBe(false);
    expect(opened.content).toContain('"Field trip sign-up form"');
    expect(opened.content).toMatch(/\[\d+\]<input type="text" name="full_name" placeholder="Ada Lovelace"\/>/);
    expect(opened.content).not.toContain('name="source"');

    const list = opened.content;
    expect((await act(test, { action: 'input_text', index: indexOf(list, 'name="full_name"'), text: 'Grace Hopper' })).content).toContain('Typed "Grace Hopper"');
    await act(test, { action: 'input_text', index: indexOf(list, 'name="email"'), text: 'grace@example.org' });
    await act(test, { action: 'input_text', index: indexOf(list, 'name="notes"'), text: 'Two torches' });
    const options = await act(test, { action: 'get_dropdown_options', index: indexOf(list, 'name="walk"') });
    expect(options.content).toContain('2: "Owl trail (21:00)" (value "owls")');
    expect(options.content).toContain('0: "Choose a walk" (selected)');
    const selected = await act(test, { action: 'select_dropdown_option', index: indexOf(list, 'name="walk"'), text: 'Owl trail (21:00)' });
    expect(selected.content).toContain('Selected "Owl trail (21:00)"');
    await act(test, { action: 'click_element', index: indexOf(list, 'name="newsletter"') });
    const submitted = await act(test, { action: 'click_element', index: indexOf(list, '>Send</button>') });
    expect(submitted.content).toMatch(/The page changed: now at "Received" — http:\/\/127\.0\.0\.1:\d+\/echo/);

    const received = await activePage(test).innerText('#fields');
    expect(received).toContain('full_name: Grace Hopper');
    expect(received).toContain('email: grace@example.org');
    expect(received).toContain('walk: owls');
    expect(received).toContain('newsletter: yes');
    expect(received).toContain('notes: Two torches');
  });

  it('refuses a number from a page that has gone instead of clicking whatever has that number now', async () => {
    const test = browserContext();
    // With the state provider on, lists reach the model through the state, as in a run.
    markStateProviderActive(test.context.resources);
    await act(test, { action: 'go_to_url', url: `${site.origin}/form.html` });
    const session = existingBrowserSession(test.context.resources)!;
    const state = await renderBrowserState(session, { maxCharacters: 6000, screenshot: false, screenshotQuality: 70, timeoutMs: 5000 });
    const sendButton = indexOf(state!.text, '>Send</button>');
    // The model saw the form's list, then a navigation happened in the same turn.
    await act(test, { action: 'go_to_url', url: `${site.origin}/index.html` });
    const stale = await act(test, { action: 'click_element', index: sendButton });
    expect(stale.isError).toBe(true);
    expect(stale.content).toContain(`There is no element [${sendButton}] on the current page: the page has changed since that list was made`);
    expect(stale.content).toContain('Use an index from the current list of interactive elements');
    expect(activePage(test).url()).toBe(`${site.origin}/index.html`);
  });

  it('keeps an element number while its page lives, and numbers new elements after the others', async () => {
    const test = browserContext();
    const first = await act(test, { action: 'go_to_url', url: `${site.origin}/form.html` });
    const sendButton = indexOf(first.content, '>Send</button>');
    await activePage(test).evaluate(`document.body.insertAdjacentHTML('afterbegin', '<button type="button" id="late">Late button</button>')`);
    const again = await act(test, { action: 'scroll_down', scroll_amount: 1 });
    expect(indexOf(again.content, '>Send</button>')).toBe(sendButton);
    expect(indexOf(again.content, 'Late button')).toBe(indexOf(first.content, 'Unavailable') + 1);
    // A disabled element is reported, not clicked.
    const disabled = await act(test, { action: 'click_element', index: indexOf(first.content, 'Unavailable') });
    expect(disabled.isError).toBe(true);
    expect(disabled.content).toContain('is disabled');
  });

  it('follows links that open new tabs, switches and closes tabs', async () => {
    const test = browserContext();
    const list = (await act(test, { action: 'go_to_url', url: `${site.origin}/tabs.html` })).content;
    const clicked = await act(test, { action: 'click_element', index: indexOf(list, 'opens in a new tab') });
    expect(clicked.content).toContain('The page opened a new tab [2], now the active tab: "Glass frogs of the cloud forest"');
    expect(activePage(test).url()).toBe(`${site.origin}/article.html`);

    const switched = await act(test, { action: 'switch_tab', tab_id: 1 });
    expect(switched.content).toContain('Switched to tab [1]: now at "Reading list"');
    const popup = await act(test, { action: 'click_element', index: indexOf(list, 'new window') });
    expect(popup.content).toContain('new tab [3], now the active tab: "Field trip sign-up form"');

    const closed = await act(test, { action: 'close_tab', tab_id: 2 });
    expect(closed.content).toContain('Closed tab [2]. The active tab is [3]');
    const missing = await act(test, { action: 'switch_tab', tab_id: 2 });
    expect(missing.isError).toBe(true);
    expect(missing.content).toContain('There is no tab 2. Open tabs: 1, 3.');

    const opened = await act(test, { action: 'open_tab', url: `${site.origin}/download.html` });
    expect(opened.content).toContain('Opened tab [4] and made it active.');
    expect(existingBrowserSession(test.context.resources)!.tabs.map((tab) => tab.id)).toEqual([1, 3, 4]);
  });

  it('clicks once and waits for the page it opens, however slow', async () => {
    let visits = 0;
    const slowSite = await startFixtureSite({
      routes: {
        '/slow-page': (_request, response) => {
          visits += 1;
          setTimeout(() => response.writeHead(200, { 'content-type': 'text/html' }).end('<title>Slow page</title><p>Finally.</p>'), 4000);
        },
      },
    });
    try {
      const test = browserContext();
      const list = (await act(test, { action: 'go_to_url', url: `${slowSite.origin}/link?href=/slow-page` })).content;
      const clicked = await act(test, { action: 'click_element', index: indexOf(list, 'Follow the link') });
      expect(clicked.content).toContain('The page changed: now at "Slow page"');
      expect(visits).toBe(1);
    } finally {
      await slowSite.close();
    }
  });

  it('recovers from a page whose script loops while loading: the tab is replaced and the next action works', async () => {
    const test = browserContext({ action_timeout_seconds: 4, navigation_timeout_seconds: 2 });
    const hung = await act(test, { action: 'go_to_url', url: `${site.origin}/hang-on-load.html` });
    expect(hung.isError).toBe(true);
    expect(hung.content).toContain('stopped responding');
    expect(hung.content).toContain('replaced by a blank one (tab 1)');
    expect(activePage(test).url()).toBe('about:blank');
    const next = await act(test, { action: 'go_to_url', url: `${site.origin}/index.html` });
    expect(next.isError).toBe(false);
    expect(next.content).toContain('"Cloud Forest Field Station"');
  });

  it('recovers from a click that starts an endless script', async () => {
    const test = browserContext({ action_timeout_seconds: 3 });
    const list = (await act(test, { action: 'go_to_url', url: `${site.origin}/hang.html` })).content;
    const started = Date.now();
    const frozen = await act(test, { action: 'click_element', index: indexOf(list, 'Freeze') });
    expect(frozen.isError).toBe(true);
    expect(frozen.content).toMatch(/stopped responding|replaced by a blank one/);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect((await act(test, { action: 'go_to_url', url: `${site.origin}/tabs.html` })).content).toContain('"Reading list"');
  });

  it('shows a page that never finishes loading as far as it got, without replacing it', async () => {
    const test = browserContext({ action_timeout_seconds: 5, navigation_timeout_seconds: 1.5 });
    const slow = await act(test, { action: 'go_to_url', url: `${site.origin}/hang` });
    expect(slow.isError).toBe(false);
    expect(slow.content).toContain('had not finished loading after 1.5 s; showing what has loaded so far');
    expect(await activePage(test).innerText('body')).toContain('The first part of a page that never finishes.');
  });

  it('saves downloads into the workspace and reports them as files', async () => {
    const test = browserContext({ downloads_folder: 'downloads' });
    const list = (await act(test, { action: 'go_to_url', url: `${site.origin}/download.html` })).content;
    const first = await act(test, { action: 'click_element', index: indexOf(list, 'Download the call counts') });
    expect(first.files).toEqual(['downloads/calls.csv']);
    expect(first.content).toContain('Downloaded downloads/calls.csv into the workspace.');
    expect(readFileSync(join(test.context.workspace, 'downloads', 'calls.csv'), 'utf8')).toContain('glass frog,42');
    const second = await act(test, { action: 'go_to_url', url: `${site.origin}/download/calls.csv` });
    expect(second.isError).toBe(false);
    expect(second.content).toContain('started a download instead of showing a page');
    expect(second.files).toEqual(['downloads/calls (2).csv']);
  });

  it('accepts dialogs and says so', async () => {
    const test = browserContext();
    const list = (await act(test, { action: 'go_to_url', url: `${site.origin}/dialog.html` })).content;
    const answered = await act(test, { action: 'click_element', index: indexOf(list, 'Delete draft') });
    expect(answered.content).toContain('The page showed a dialog and it was accepted (confirm: "Really delete the draft?")');
    expect(await activePage(test).innerText('#answer')).toBe('Deleted');
  });

  it('lists and clicks elements inside frames', async () => {
    const test = browserContext();
    const list = (await act(test, { action: 'go_to_url', url: `${site.origin}/frames.html` })).content;
    expect(list).toMatch(/\[\d+\]<button type="button">Zoom in<\/button> \(in a frame\)/);
    await act(test, { action: 'input_text', index: indexOf(list, 'name="place"'), text: 'Monteverde' });
    await act(test, { action: 'click_element', index: indexOf(list, 'Zoom in') });
    const frame = activePage(test).frames()[1];
    expect(await frame.innerText('#zoom')).toBe('Zoomed in');
    expect(await frame.inputValue('input[name=place]')).toBe('Monteverde');
  });

  it('scrolls by pixels and to text, and says when it cannot scroll further', async () => {
    const test = browserContext({ viewport: { width: 1000, height: 600 } });
    await act(test, { action: 'go_to_url', url: `${site.origin}/scroll.html` });
    const up = await act(test, { action: 'scroll_up' });
    expect(up.content).toContain('Already at the top: nothing more above (0 px above the view');
    const down = await act(test, { action: 'scroll_down', scroll_amount: 500 });
    expect(down.content).toMatch(/^Scrolled down 500 px: 500 px above the view, \d+ px below\./);
    const screen = await act(test, { action: 'scroll_down' });
    expect(screen.content).toContain('Scrolled down 600 px: 1100 px above the view');
    const found = await act(test, { action: 'scroll_to_text', text: 'password for the night walk' });
    expect(found.content).toContain('Scrolled to the text');
    expect(await activePage(test).evaluate('window.scrollY + window.innerHeight >= document.body.scrollHeight - 5')).toBe(true);
    const absent = await act(test, { action: 'scroll_to_text', text: 'no such words here' });
    expect(absent.isError).toBe(true);
    expect(absent.content).toContain('is not visible anywhere on the page');
  });

  it('presses keys, goes back and reloads', async () => {
    const test = browserContext();
    const list = (await act(test, { action: 'go_to_url', url: `${site.origin}/form.html` })).content;
    await act(test, { action: 'input_text', index: indexOf(list, 'name="full_name"'), text: 'Ada' });
    const entered = await act(test, { action: 'send_keys', keys: 'Enter' });
    expect(entered.content).toMatch(/Pressed Enter\. The page changed: now at "Received"/);
    const unknown = await act(test, { action: 'send_keys', keys: 'Hyper+Q' });
    expect(unknown.isError).toBe(true);
    expect(unknown.content).toContain('to type text, use input_text');
    expect((await act(test, { action: 'go_back' })).content).toContain('Went back: now at "Field trip sign-up form"');
    expect((await act(test, { action: 'refresh' })).content).toContain('Reloaded the page: now at "Field trip sign-up form"');
    expect((await act(test, { action: 'wait', seconds: 0.2 })).content).toContain('Waited 0.2 s.');
    const missing = await act(test, { action: 'go_to_url', url: `${site.origin}/status/404` });
    expect(missing.content).toContain('The server answered with status 404 Not Found.');
  });

  it('searches through the web_search tool and opens the first result', async () => {
    const test = browserContext({}, { engines: ['searxng'], endpoints: { searxng: `${site.origin}/searxng` } });
    const result = await act(test, { action: 'web_search', query: 'glass frogs' });
    expect(result.isError).toBe(false);
    expect(result.content).toContain('Searched for "glass frogs" and opened the first result, "Glass frogs of the cloud forest".');
    expect(result.content).toContain(`2. Field trip sign-up form — ${site.origin}/form.html`);
    expect(activePage(test).url()).toBe(`${site.origin}/article.html`);
  });

  it('searches on a configured search page when search_url is set', async () => {
    const test = browserContext({ search_url: `${site.origin}/search?q={query}`, search_result_selector: 'a.result' });
    const result = await act(test, { action: 'web_search', query: 'night walk' });
    expect(result.content).toContain('opened the first result, "Glass frogs of the cloud forest"');
    expect(activePage(test).url()).toBe(`${site.origin}/article.html`);
  });

  it('opens workspace files but no other file on the machine', async () => {
    const test = browserContext();
    const secret = join(test.root, 'secret.txt');
    writeFileSync(secret, 'the secret outside the workspace');
    const secretUrl = pathToFileURL(secret).href;
    writeFileSync(join(test.context.workspace, 'handbook.html'), `<title>Handbook</title><h1>Day 1</h1><iframe src="${secretUrl}"></iframe>`);
    const opened = await act(test, { action: 'go_to_url', url: pathToFileURL(join(test.context.workspace, 'handbook.html')).href });
    expect(opened.content).toContain('"Handbook"');
    // The frame shows Chromium's "not readable" page instead of the file.
    const frameText = await activePage(test).frames()[1].evaluate('document.body ? document.body.innerText : ""');
    expect(frameText).not.toContain('the secret');
    expect(frameText).toContain('not readable');
    const outside = await act(test, { action: 'go_to_url', url: secretUrl });
    expect(outside.isError).toBe(true);
    expect(outside.content).toContain('file: URLs may only show files inside the workspace');
    const scheme = await act(test, { action: 'go_to_url', url: 'chrome://settings' });
    expect(scheme.content).toContain('the browser opens http and https pages and files in the workspace only');
  });

  it('checks the arguments each action needs and the settings it is given', async () => {
    expect(await thrown(browserContext(), { action: 'input_text', index: 1 })).toContain("The action 'input_text' needs 'text'.");
    expect(await thrown(browserContext({ headles: false }), { action: 'go_to_url', url: site.origin })).toContain("unknown key 'headles' (did you mean 'headless'?)");
    expect(await thrown(browserContext({ executable_path: '/nonexistent/chromium' }), { action: 'go_to_url', url: site.origin }))
      .toContain('Chromium could not be started from /nonexistent/chromium');
  });

  it('replaces a crashed page and says so', async () => {
    const test = browserContext();
    await act(test, { action: 'go_to_url', url: `${site.origin}/index.html` });
    const page = activePage(test);
    const devtools = await page.context().newCDPSession(page);
    const crash = page.waitForEvent('crash');
    // The command gets no answer from a crashed renderer; the crash event is the sign.
    devtools.send('Page.crash').catch(() => undefined);
    await crash;
    const crashed = await act(test, { action: 'scroll_down' });
    expect(crashed.isError).toBe(true);
    expect(crashed.content).toContain(`The page ${site.origin}/index.html had crashed; its tab was replaced by a blank one.`);
    expect((await act(test, { action: 'go_to_url', url: `${site.origin}/form.html` })).isError).toBe(false);
  });

  it('starts a new browser when the old one has gone', async () => {
    const test = browserContext();
    await act(test, { action: 'go_to_url', url: `${site.origin}/index.html` });
    const first = activePage(test).context().browser()!;
    await first.close();
    const again = await act(test, { action: 'go_to_url', url: `${site.origin}/form.html` });
    expect(again.isError).toBe(false);
    expect(activePage(test).context().browser()).not.toBe(first);
  });

  it('stops waiting at once when the run is interrupted', async () => {
    const controller = new AbortController();
    const test = newContext({ signal: controller.signal, network: createToolNetwork({ allowPrivate: true }) });
    await act(test, { action: 'go_to_url', url: `${site.origin}/index.html` });
    const started = Date.now();
    setTimeout(() => controller.abort(new Error('interrupted')), 300);
    await expect(act(test, { action: 'wait', seconds: 30 })).rejects.toThrow('interrupted');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('closes the browser when the run disposes its resources', async () => {
    const test = createTestToolContext({ network: createToolNetwork({ allowPrivate: true }) });
    await act(test, { action: 'go_to_url', url: `${site.origin}/index.html` });
    const page = activePage(test);
    const browser = page.context().browser()!;
    expect(browser.isConnected()).toBe(true);
    await test.dispose();
    expect(browser.isConnected()).toBe(false);
    expect(existingBrowserSession(test.context.resources)).toBeUndefined();
  });
});

describe.skipIf(chromiumMissing)(`browser_use and private addresses${chromiumMissing ? ' (skipped: no Chromium)' : ''}`, () => {
  const contexts: TestToolContext[] = [];
  afterEach(async () => {
    for (const test of contexts.splice(0)) await test.dispose();
  });

  it('refuses loopback pages under the defaults, by address and by name, and still opens them when the user allows it', async () => {
    const defaults = createTestToolContext();
    contexts.push(defaults);
    const port = new URL(site.origin).port;
    for (const url of [`${site.origin}/index.html`, `http://localhost:${port}/index.html`, `http://2130706433:${port}/index.html`, `http://[::ffff:127.0.0.1]:${port}/index.html`]) {
      const result = await act(defaults, { action: 'go_to_url', url });
      expect(result.isError, url).toBe(true);
      expect(result.content).toMatch(/Blocked: .*private address/);
      expect(activePage(defaults).url()).not.toContain('/index.html');
    }
    const allowed = createTestToolContext({ network: createToolNetwork({ allowPrivate: true }) });
    contexts.push(allowed);
    expect((await act(allowed, { action: 'go_to_url', url: `${site.origin}/index.html` })).isError).toBe(false);
  });
});

describe('browser settings', () => {
  it('points search settings given to the browser at the web_search tool, which its searches go through', () => {
    expect(() => readBrowserSettings({ web_search: { engines: ['bing'] } }, {})).toThrow(
      "tool_settings.browser_use.web_search is not read: the web_search action searches through the web_search tool, so give its engines' settings in tool_settings.web_search instead.",
    );
  });
});

describe('domain rule matching', () => {
  it('matches a listed domain and its subdomains, whatever form the entry takes', () => {
    const rules = new DomainRules(['*.Example.com', 'https://shop.test:8080/path', '[::1]', '10.0.0.1:3000'], ['ads.example.com']);
    expect(rules.refusal('https://example.com/')).toBeUndefined();
    expect(rules.refusal('https://deep.www.example.com/page')).toBeUndefined();
    expect(rules.refusal('http://shop.test/')).toBeUndefined();
    expect(rules.refusal('http://[::1]:8000/')).toBeUndefined();
    expect(rules.refusal('http://10.0.0.1/')).toBeUndefined();
    expect(rules.refusal('https://notexample.com/')).toBe('notexample.com is not in allowed_domains (example.com, shop.test, ::1, 10.0.0.1)');
    expect(rules.refusal('https://x.ads.example.com/')).toBe('x.ads.example.com is blocked by blocked_domains (ads.example.com)');
    expect(rules.refusal('wss://evil.test/socket')).toContain('evil.test is not in allowed_domains');
    expect(rules.refusal('data:text/html,hello')).toBeUndefined();
    expect(new DomainRules([], []).active).toBe(false);
  });
});

describe.skipIf(chromiumMissing)(`domain rules${chromiumMissing ? ' (skipped: no Chromium)' : ''}`, () => {
  const localhost = () => `http://localhost:${site.port}`;

  it('allows listed domains and their subdomains, loopback included, and nothing else', async () => {
    const test = browserContext({ allowed_domains: ['localhost'] });
    expect((await act(test, { action: 'go_to_url', url: `${localhost()}/index.html` })).isError).toBe(false);
    const subdomain = await act(test, { action: 'go_to_url', url: `http://shop.localhost:${site.port}/form.html` });
    expect(subdomain.isError).toBe(false);
    expect(subdomain.content).toContain('"Field trip sign-up form"');
    const ip = await act(test, { action: 'go_to_url', url: `${site.origin}/index.html` });
    expect(ip.isError).toBe(true);
    expect(ip.content).toContain('Navigation to http://127.0.0.1:');
    expect(ip.content).toContain('127.0.0.1 is not in allowed_domains (localhost)');
    // Requests from the page follow the same rules as navigation.
    const fetched = await activePage(test).evaluate(`fetch('${site.origin}/headers').then(() => 'reached', () => 'refused')`);
    expect(fetched).toBe('refused');
  });

  it('stops clicks, new tabs and redirects that lead to a blocked domain, and returns to the page', async () => {
    const test = browserContext({ blocked_domains: ['ads.localhost'] });
    const blockedUrl = `http://ads.localhost:${site.port}/index.html`;
    const linkPage = `${localhost()}/link?href=${encodeURIComponent(blockedUrl)}`;
    const list = (await act(test, { action: 'go_to_url', url: linkPage })).content;
    const clicked = await act(test, { action: 'click_element', index: indexOf(list, 'Follow the link') });
    expect(clicked.isError).toBe(true);
    expect(clicked.content).toContain(`Blocked: the browser may not open ${blockedUrl} (ads.localhost is blocked by blocked_domains (ads.localhost))`);
    expect(activePage(test).url()).toBe(linkPage);

    const tabPage = `${linkPage}&target=_blank`;
    const tabList = (await act(test, { action: 'go_to_url', url: tabPage })).content;
    const popup = await act(test, { action: 'click_element', index: indexOf(tabList, 'Follow the link') });
    expect(popup.isError).toBe(true);
    expect(popup.content).toContain('The new tab it was to open in was closed.');
    expect(existingBrowserSession(test.context.resources)!.tabs).toHaveLength(1);

    const redirected = await act(test, { action: 'go_to_url', url: `${localhost()}/redirect?to=${encodeURIComponent(blockedUrl)}` });
    expect(redirected.isError).toBe(true);
    expect(redirected.content).toMatch(/Blocked: (tab \[1\] was redirected to|the browser may not open) http:\/\/ads\.localhost/);
    expect(activePage(test).url()).not.toContain('ads.localhost');

    const allowed = await act(test, { action: 'go_to_url', url: `${localhost()}/index.html` });
    expect(allowed.isError).toBe(false);
  });
});

describe.skipIf(chromiumMissing)(`attaching over CDP${chromiumMissing ? ' (skipped: no Chromium)' : ''}`, () => {
  let chromium: ChildProcess | undefined;
  afterEach(() => {
    chromium?.kill('SIGKILL');
  });

  it('uses a running browser and leaves it running, closing only its own tabs', async () => {
    const profile = mkdtempSync(join(tmpdir(), 'manus-cdp-'));
    chromium = spawn(chromiumPath, ['--headless', '--no-sandbox', '--disable-gpu', '--remote-debugging-port=0', `--user-data-dir=${profile}`, 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const endpoint = await new Promise<string>((resolve, reject) => {
      let output = '';
      chromium!.stderr!.on('data', (chunk) => {
        output += chunk;
        const match = /DevTools listening on (ws:\/\/\S+)/.exec(output);
        if (match) resolve(match[1]);
      });
      chromium!.on('exit', () => reject(new Error(`chromium exited: ${output}`)));
    });
    const test = browserContext({ cdp_url: endpoint });
    const opened = await act(test, { action: 'go_to_url', url: `${site.origin}/index.html` });
    expect(opened.content).toContain('"Cloud Forest Field Station"');
    const portMatch = /ws:\/\/([^/]+)\//.exec(endpoint)!;
    const listTargets = async () => (await (await fetch(`http://${portMatch[1]}/json/list`)).json()) as Array<{ url: string }>;
    expect((await listTargets()).some((target) => target.url.includes('/index.html'))).toBe(true);
    // Disposing again after the test is harmless: the session is already gone.
    await test.dispose();
    expect(chromium.exitCode).toBeNull();
    const remaining = await listTargets();
    expect(remaining.some((target) => target.url.includes('/index.html'))).toBe(false);
    expect(remaining.some((target) => target.url === 'about:blank')).toBe(true);
  });
});

/** Runs a recipe through the CLI against a scripted model. */
async function runRecipe(recipe: string, turns: ScriptedTurn[]) {
  const fixture = makeFixture({ 'recipe.yaml': recipe });
  const server = await startScriptedModelServer({ turns });
  try {
    const result = await runCli(['run', 'recipe.yaml', '--json'], {
      cwd: fixture,
      // The fixture site is on loopback: allowed in the user's configuration, as a user would.
      env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: 'scripted-model', OPENAI_API_KEY: 'test-key', XDG_CONFIG_HOME: privateNetworkConfigHome() },
      timeoutMs: 90_000,
    });
    const requests = server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
    return { ...result, requests, failures: server.expectationFailures };
  } finally {
    await server.close();
  }
}

const call = (name: string, args: Record<string, unknown>, expectation?: ScriptedTurn['expect']): ScriptedTurn => ({ toolCalls: [{ name, arguments: args }], expect: expectation });

/** The browser state the model was shown in a request (the last user message). */
function shownState(request: RecordedChatRequest): string {
  const last = request.body.messages.at(-1) as { role: string; content: unknown };
  return typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
}

describe.skipIf(chromiumMissing)(`research through the loop${chromiumMissing ? ' (skipped: no Chromium)' : ''}`, () => {
  it('searches, opens, clicks by number, fills a form, extracts and writes a file', async () => {
    const recipe = [
      'version: 1',
      'name: browse',
      'prompt: Sign up for the owl walk and note what was sent.',
      'agent:',
      '  system_prompt: You browse the web.',
      '  tools: [browser_use, extract_content, str_replace_editor, terminate]',
      '  context_providers: [browser_state]',
      '  max_steps: 12',
      'tool_settings:',
      '  web_search:',
      `    engines: [searxng]`,
      `    endpoints: { searxng: '${site.origin}/searxng' }`,
      '',
    ].join('\n');
    const stateHas = (text: string) => (request: RecordedChatRequest) => {
      if (!shownState(request).includes(text)) throw new Error(`the browser state lacks ${text}: ${shownState(request)}`);
    };
    const run = await runRecipe(recipe, [
      call('browser_use', { action: 'web_search', query: 'glass frogs' }),
      call('browser_use', { action: 'click_element', index: 8 }, stateHas('[8]<a href="/form.html">sign up for a night walk</a>')),
      call('browser_use', { action: 'input_text', index: 1, text: 'Ada Lovelace' }, stateHas('[1]<input type="text" name="full_name"')),
      call('browser_use', { action: 'select_dropdown_option', index: 4, text: 'Owl trail (21:00)' }),
      call('browser_use', { action: 'click_element', index: 7 }),
      call('extract_content', { goal: 'the fields the server received' }, stateHas('URL: http://127.0.0.1')),
      { content: JSON.stringify({ relevant: true, extracted: 'full_name: Ada Lovelace; walk: owls', sources: [] }) },
      call('str_replace_editor', { command: 'create', path: 'signup.md', file_text: 'Signed up: full_name Ada Lovelace, walk owls\n' }),
      { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'Signed up for the owl walk.' } }] },
    ]);
    expect(run.failures).toEqual([]);
    expect(run.exitCode, `${run.stderr}\n${run.stdout}`).toBe(0);
    const result = (index: number) => toolMessages(run.requests[index]).at(-1)!.content;
    expect(result(1)).toContain('opened the first result, "Glass frogs of the cloud forest"');
    // With the state provider on, results stay short: the element list is in the state only.
    expect(result(1)).not.toContain('Interactive elements');
    expect(result(2)).toContain('The page changed: now at "Field trip sign-up form"');
    expect(result(5)).toContain('now at "Received"');
    const extraction = run.requests[6];
    expect(JSON.stringify(extraction.body.messages)).toContain('- **walk**: owls');
    expect(extraction.body.response_format).toMatchObject({ type: 'json_schema' });
    expect(result(7)).toContain('full_name: Ada Lovelace; walk: owls');
    expect(readFileSync(join(run.json.workspace, 'signup.md'), 'utf8')).toContain('walk owls');
    // The state is shown each step, never stored in the history.
    const history = JSON.stringify(run.requests.at(-1)!.body.messages.slice(0, -1));
    expect(history).not.toContain('Current browser state');
    const events = readEvents(run.json.runDirectory);
    expect(events.filter((event) => event.type === 'resource-dispose-failed')).toEqual([]);
  }, 120_000);
});
