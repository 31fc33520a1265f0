/**
 * Actions on one numbered element: click_element, input_text, get_dropdown_options and
 * select_dropdown_option. Each finds the element by its mark (a stale number fails clearly),
 * acts, and waits for a navigation the action started.
 */
import type { Locator } from 'playwright-core';
import { basename } from 'node:path';
import { errorMessage } from './browser-errors.js';
import { BrowserError } from './browser-errors.js';
import type { BrowserSession, BrowserTab } from './browser-session.js';
import { locateElement } from './element-index.js';
import { formatElement } from './element-list.js';
import { mediaTypeOf } from './workspace-files.js';
import { describePage } from './navigation-actions.js';
import { NavigationWatch, type NavigationOutcome } from './navigation-watch.js';
import { formatSeconds } from './time-limit.js';

/** Playwright waits this long for an element to become clickable before the script fallback. */
const clickWaitMs = 3000;

interface DropdownOption {
  text: string;
  value: string;
  selected: boolean;
}

interface Dropdown {
  kind: 'select' | 'listbox' | 'none';
  options: DropdownOption[];
}

export async function clickElement(session: BrowserSession, tab: BrowserTab, index: number): Promise<string> {
  const element = await locateElement(tab.page, index);
  const described = describeIndex(tab, index);
  if (tab.numbering.lastSeen.get(index)?.attributes.disabled === 'true') {
    throw new BrowserError('browser_action_failed', `${described} is disabled and cannot be clicked; something else on the page may have to be done first.`);
  }
  // A trial click checks that the element can be clicked without clicking it, so a failure
  // here never leads to clicking twice.
  let clickable = true;
  try {
    await element.click({ trial: true, timeout: Math.min(clickWaitMs, session.settings.actionTimeoutMs / 2) });
  } catch (error) {
    if (!/Timeout|intercepts pointer events|not visible|outside of the viewport|not stable/i.test(errorMessage(error))) {
      throw new BrowserError('browser_action_failed', `Could not click ${described}: ${firstLine(error)}`);
    }
    clickable = false;
  }
  const watch = new NavigationWatch(tab.page);
  // The navigation a click starts is awaited by the watch, not by Playwright, which would time out on a slow page.
  if (clickable) await element.click({ noWaitAfter: true });
  // Covered by a banner or still moving: a script click still triggers the element's action.
  else await element.dispatchEvent('click');
  const how = clickable ? '' : ' with a script, because the element could not be clicked directly (another element may cover it)';
  const navigation = await watch.settle(session.settings.navigationTimeoutMs);
  return `Clicked ${described}${how}.${await navigationNote(session, tab, navigation)}`;
}

export async function inputText(session: BrowserSession, tab: BrowserTab, index: number, text: string): Promise<string> {
  const element = await locateElement(tab.page, index);
  const described = describeIndex(tab, index);
  const kind = await element.evaluate((node) => ({ tag: node.tagName.toLowerCase(), type: (node as HTMLInputElement).type ?? '' }));
  if (kind.tag === 'select') {
    throw new BrowserError('browser_action_failed', `${described} is a drop-down list: use get_dropdown_options and select_dropdown_option.`);
  }
  if (kind.tag === 'input' && kind.type === 'file') {
    // Read by the runtime and handed over as bytes: a path would be opened again by the browser.
    const buffer = await session.files.readFile(text);
    await element.setInputFiles({ name: basename(text), mimeType: mediaTypeOf(text), buffer });
    return `Chose the file ${text} in ${described}.`;
  }
  try {
    await element.fill(text, { timeout: Math.min(clickWaitMs, session.settings.actionTimeoutMs / 2) });
  } catch (error) {
    throw new BrowserError('browser_action_failed', `Could not type into ${described}: ${firstLine(error)}. Text goes into inputs, text areas and editable areas; click other elements.`);
  }
  return `Typed ${JSON.stringify(text)} into ${described}.`;
}

export async function getDropdownOptions(tab: BrowserTab, index: number): Promise<string> {
  const element = await locateElement(tab.page, index);
  const described = describeIndex(tab, index);
  const dropdown = await readDropdown(element);
  if (dropdown.kind === 'none' || dropdown.options.length === 0) {
    throw new BrowserError('browser_action_failed', `${described} has no options to list. If it is a custom menu, click it to open it, then use the elements that appear.`);
  }
  const lines = dropdown.options.map((option, position) =>
    `${position}: ${JSON.stringify(option.text)}${option.value && option.value !== option.text ? ` (value ${JSON.stringify(option.value)})` : ''}${option.selected ? ' (selected)' : ''}`,
  );
  return `Options of ${described} (pass the text to select_dropdown_option):\n${lines.join('\n')}`;
}

export async function selectDropdownOption(session: BrowserSession, tab: BrowserTab, index: number, text: string): Promise<string> {
  const element = await locateElement(tab.page, index);
  const described = describeIndex(tab, index);
  const dropdown = await readDropdown(element);
  const wanted = text.trim().toLowerCase();
  const option = dropdown.options.find((candidate) => candidate.text.trim().toLowerCase() === wanted)
    ?? dropdown.options.find((candidate) => candidate.value.toLowerCase() === wanted);
  if (dropdown.kind === 'none') {
    throw new BrowserError('browser_action_failed', `${described} is not a drop-down list. Click it if it opens a menu.`);
  }
  if (!option) {
    const available = dropdown.options.map((candidate) => JSON.stringify(candidate.text)).join(', ');
    throw new BrowserError('browser_action_failed', `${described} has no option ${JSON.stringify(text)}. Its options: ${available}.`);
  }
  const watch = new NavigationWatch(tab.page);
  if (dropdown.kind === 'select') {
    await element.selectOption({ label: option.text }, { noWaitAfter: true });
  } else {
    await tab.page.getByRole('option', { name: option.text, exact: true }).first().click({ timeout: clickWaitMs, noWaitAfter: true });
  }
  const navigation = await watch.settle(session.settings.navigationTimeoutMs);
  return `Selected ${JSON.stringify(option.text)} in ${described}.${await navigationNote(session, tab, navigation)}`;
}

/** What a navigation after an interaction means for the model, as a sentence to append. */
export async function navigationNote(session: BrowserSession, tab: BrowserTab, outcome: NavigationOutcome): Promise<string> {
  switch (outcome) {
    case 'none':
    case 'failed':
      return '';
    case 'loaded':
      return ` The page changed: now at ${await describePage(tab)}.`;
    case 'slow':
      return ` A new page is loading and had not finished after ${formatSeconds(session.settings.navigationTimeoutMs)}: now at ${await describePage(tab)}.`;
  }
}

/** `[5]<a href="/x">Open</a>` from the last list, or just `[5]` when the list did not show it. */
export function describeIndex(tab: BrowserTab, index: number): string {
  const element = tab.numbering.lastSeen.get(index);
  if (!element) return `element [${index}]`;
  const text = formatElement(element);
  return text.length > 160 ? `${text.slice(0, 159)}…` : text;
}

async function readDropdown(element: Locator): Promise<Dropdown> {
  return element.evaluate((node): Dropdown => {
    if (node instanceof HTMLSelectElement) {
      return {
        kind: 'select',
        options: Array.from(node.options).map((option) => ({ text: option.text, value: option.value, selected: option.selected })),
      };
    }
    const controlled = node.getAttribute('aria-controls') || node.getAttribute('aria-owns');
    const container = (controlled && document.getElementById(controlled)) || node;
    const items = Array.from(container.querySelectorAll('[role=option]'));
    return {
      kind: items.length > 0 ? 'listbox' : 'none',
      options: items.map((item) => ({
        text: (item.textContent ?? '').replace(/\s+/g, ' ').trim(),
        value: item.getAttribute('data-value') ?? '',
        selected: item.getAttribute('aria-selected') === 'true',
      })),
    };
  });
}

function firstLine(error: unknown): string {
  return errorMessage(error).split('\n')[0].trim();
}
