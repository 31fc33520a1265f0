/**
 * The browser's current state for the model: URL, title, tabs, scroll position and the numbered
 * list of interactive elements within a character budget, plus, for a vision model, a JPEG of
 * the view with each element's number drawn on it.
 */
import type { ToolImage } from 'manus-runtime';
import type { BrowserSession, BrowserTab } from './browser-session.js';
import { indexAttribute } from './element-index-script.js';
import { indexElements, type ElementSnapshot, type ScrollPosition } from './element-index.js';
import { formatElementList } from './element-list.js';
import { drawHighlightsSource, highlightOverlayId, removeHighlightsSource, type HighlightInput } from './highlight-script.js';
import { pageScriptCall } from './page-script.js';
import { withTimeout } from './time-limit.js';

export interface BrowserStateOptions {
  maxCharacters: number;
  screenshot: boolean;
  /** JPEG quality of the screenshot, 1-100. */
  screenshotQuality: number;
  timeoutMs: number;
}

export interface BrowserState {
  text: string;
  images?: ToolImage[];
  /** Numbers and sizes, for tests and the benchmark. */
  listedElements: number;
  omittedElements: number;
}

const titleTimeoutMs = 1000;

export async function renderBrowserState(session: BrowserSession, options: BrowserStateOptions): Promise<BrowserState | undefined> {
  const tab = session.activeTab;
  if (!tab) return undefined;
  const page = tab.page;
  // A page stuck in a script answers nothing; find out once instead of waiting on each question.
  if (!(await session.isResponsive(tab))) {
    const text = [
      'Current browser state:',
      `URL: ${page.url()}`,
      'The page is not responding, so its elements cannot be listed. Wait, go back, or open another page.',
    ].join('\n');
    return { text, listedElements: 0, omittedElements: 0 };
  }
  const header = [`URL: ${page.url()}`, `Title: ${await titleOf(tab)}`, `Tabs: ${await describeTabs(session, tab)}`];
  let snapshot: ElementSnapshot;
  try {
    snapshot = await withTimeout(indexElements(page, tab.numbering, options.timeoutMs), options.timeoutMs, 'listing the elements');
  } catch {
    const text = ['Current browser state:', ...header, 'The elements of the page could not be listed in time. Wait, go back, or open another page.'].join('\n');
    return { text, listedElements: 0, omittedElements: 0 };
  }
  header.push(`Scroll: ${describeScroll(snapshot.scroll)}`);
  const intro = 'Interactive elements (pass the number in brackets as index to click_element, input_text, get_dropdown_options or select_dropdown_option):';
  const fixed = ['Current browser state:', ...header, intro].join('\n');
  const list = formatElementList(snapshot, Math.max(0, options.maxCharacters - fixed.length - 1));
  const state: BrowserState = { text: `${fixed}\n${list.text}`, listedElements: list.listed, omittedElements: list.omitted };
  if (options.screenshot) {
    const inView = snapshot.elements.filter((element) => element.position === 'in view' && !element.frameUrl).map((element) => element.index);
    const image = await screenshotWithNumbers(tab, inView, options).catch(() => undefined);
    if (image) state.images = [image];
  }
  return state;
}

function describeScroll(scroll: ScrollPosition): string {
  if (scroll.pixelsAbove === 0 && scroll.pixelsBelow === 0) return 'the whole page fits in the view';
  const scrollable = scroll.pixelsAbove + scroll.pixelsBelow;
  const percent = Math.round((scroll.pixelsAbove / scrollable) * 100);
  return `${scroll.pixelsAbove} px above the view, ${scroll.pixelsBelow} px below (${percent}% scrolled)`;
}

async function describeTabs(session: BrowserSession, active: BrowserTab): Promise<string> {
  const tabs = session.tabs;
  const described = await Promise.all(tabs.map(async (tab) => {
    const marker = tab === active ? ' (active)' : '';
    return `[${tab.id}]${marker} ${await titleOf(tab)} — ${tab.page.url()}`;
  }));
  return described.join('; ');
}

/** A page stuck in a script cannot even say its title; that must not hold up the state. */
async function titleOf(tab: BrowserTab): Promise<string> {
  const title = await withTimeout(tab.page.title(), titleTimeoutMs, 'reading the title').catch(() => '');
  return title.trim() || '(no title)';
}

async function screenshotWithNumbers(tab: BrowserTab, indexes: number[], options: BrowserStateOptions): Promise<ToolImage> {
  const page = tab.page;
  const highlight: HighlightInput = { overlayId: highlightOverlayId, attribute: indexAttribute, indexes };
  await withTimeout(page.evaluate(pageScriptCall(drawHighlightsSource, highlight)), options.timeoutMs, 'marking the elements');
  try {
    const bytes = await page.screenshot({ type: 'jpeg', quality: options.screenshotQuality, timeout: options.timeoutMs });
    return { data: bytes.toString('base64'), mimeType: 'image/jpeg' };
  } finally {
    await withTimeout(page.evaluate(pageScriptCall(removeHighlightsSource, highlightOverlayId)), options.timeoutMs, 'unmarking the elements').catch(() => undefined);
  }
}
