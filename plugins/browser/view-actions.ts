/**
 * Actions that move around the page or press keys: scroll_down, scroll_up, scroll_to_text and
 * send_keys.
 */
import { errorMessage } from './browser-errors.js';
import { BrowserError } from './browser-errors.js';
import type { BrowserSession, BrowserTab } from './browser-session.js';
import { navigationNote } from './element-actions.js';
import { NavigationWatch } from './navigation-watch.js';
import { pageScriptCall } from './page-script.js';
import { scrollSource, type ScrollScriptInput, type ScrollScriptOutput } from './scroll-script.js';

export async function scroll(tab: BrowserTab, direction: 'down' | 'up', pixels: number | undefined): Promise<string> {
  const input: ScrollScriptInput = { direction, pixels };
  const result = (await tab.page.evaluate(pageScriptCall(scrollSource, input))) as ScrollScriptOutput;
  const where = `${result.pixelsAbove} px above the view, ${result.pixelsBelow} px below`;
  const panel = result.panel ? ' (the page scrolls inside a panel)' : '';
  if (result.moved === 0) {
    return direction === 'down'
      ? `Already at the bottom${panel}: nothing more below (${where}).`
      : `Already at the top${panel}: nothing more above (${where}).`;
  }
  return `Scrolled ${direction} ${Math.abs(result.moved)} px${panel}: ${where}.`;
}

export async function scrollToText(tab: BrowserTab, text: string): Promise<string> {
  for (const frame of tab.page.frames()) {
    const match = frame.getByText(text).filter({ visible: true }).first();
    if ((await match.count().catch(() => 0)) === 0) continue;
    await match.scrollIntoViewIfNeeded();
    return `Scrolled to the text ${JSON.stringify(text)}.`;
  }
  throw new BrowserError('browser_action_failed', `The text ${JSON.stringify(text)} is not visible anywhere on the page. Check the spelling, or use a shorter part of it.`);
}

/** Presses keys in turn: "Enter", "Control+a", or several separated by spaces ("Tab Tab Enter"). */
export async function sendKeys(session: BrowserSession, tab: BrowserTab, keys: string): Promise<string> {
  const sequence = keys.trim().split(/\s+/).filter(Boolean);
  if (sequence.length === 0) throw new BrowserError('browser_action_failed', 'No keys given: say which keys to press, like "Enter" or "Control+a".');
  const watch = new NavigationWatch(tab.page);
  try {
    for (const key of sequence) await tab.page.keyboard.press(key);
  } catch (error) {
    watch.stop();
    if (/Unknown key/i.test(errorMessage(error))) {
      throw new BrowserError(
        'browser_action_failed',
        `${errorMessage(error).split('\n')[0]}. Use key names like Enter, Tab, Escape, Backspace, ArrowDown, PageDown or chords like Control+a; to type text, use input_text.`,
      );
    }
    throw error;
  }
  const navigation = await watch.settle(session.settings.navigationTimeoutMs);
  return `Pressed ${sequence.join(', ')}.${await navigationNote(session, tab, navigation)}`;
}
