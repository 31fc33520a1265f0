/**
 * The browser_use tool's input, as OpenManus names it, and the dispatch of each action to the
 * code that performs it. Every action that touches a page runs under the session's time limit.
 */
import type { JsonSchema, ToolContext, ToolResult } from 'manus-runtime';
import { reportAction } from './action-report.js';
import { BrowserError } from './browser-errors.js';
import type { BrowserSession } from './browser-session.js';
import { clickElement, getDropdownOptions, inputText, selectDropdownOption } from './element-actions.js';
import { extractFromActivePage } from './extract-page.js';
import { goBack, goToUrl, refresh, waitFor } from './navigation-actions.js';
import { searchAndOpen, searchWithEngines } from './search-action.js';
import type { SearchHit } from './search-results-script.js';
import { browserSessionFor, existingBrowserSession, isStateProviderActive } from './session-registry.js';
import { closeTab, openTab, switchTab } from './tab-actions.js';
import { scroll, scrollToText, sendKeys } from './view-actions.js';

export const browserActions = [
  'go_to_url',
  'click_element',
  'input_text',
  'scroll_down',
  'scroll_up',
  'scroll_to_text',
  'send_keys',
  'get_dropdown_options',
  'select_dropdown_option',
  'go_back',
  'refresh',
  'web_search',
  'wait',
  'extract_content',
  'switch_tab',
  'open_tab',
  'close_tab',
] as const;

export type BrowserAction = (typeof browserActions)[number];

export interface BrowserUseInput {
  action: BrowserAction;
  url?: string;
  index?: number;
  text?: string;
  scroll_amount?: number;
  tab_id?: number;
  query?: string;
  goal?: string;
  keys?: string;
  seconds?: number;
}

const requiredFields: Record<BrowserAction, Array<keyof BrowserUseInput>> = {
  go_to_url: ['url'],
  click_element: ['index'],
  input_text: ['index', 'text'],
  scroll_down: [],
  scroll_up: [],
  scroll_to_text: ['text'],
  send_keys: ['keys'],
  get_dropdown_options: ['index'],
  select_dropdown_option: ['index', 'text'],
  go_back: [],
  refresh: [],
  web_search: ['query'],
  wait: [],
  extract_content: ['goal'],
  switch_tab: ['tab_id'],
  open_tab: ['url'],
  close_tab: [],
};

export const defaultWaitSeconds = 3;
export const maximumWaitSeconds = 60;

export const browserUseParameters: JsonSchema = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: [...browserActions] },
    url: { type: 'string' },
    index: { type: 'integer', minimum: 0, description: 'Element index.' },
    text: { type: 'string', description: 'Text to type, find, or the option to select.' },
    scroll_amount: { type: 'integer', minimum: 1, description: 'Pixels; default one screen.' },
    tab_id: { type: 'integer', minimum: 0 },
    query: { type: 'string' },
    goal: { type: 'string', description: 'What to extract.' },
    keys: { type: 'string', description: "e.g. 'Enter', 'Control+a'." },
    seconds: { type: 'number', minimum: 0, maximum: maximumWaitSeconds },
  },
  required: ['action'],
  additionalProperties: false,
};

/** Performs one browser_use call and reports it; failures of the action come back as error results. */
export async function runBrowserAction(input: BrowserUseInput, context: ToolContext): Promise<ToolResult> {
  const missing = requiredFields[input.action].filter((field) => input[field] === undefined || input[field] === '');
  if (missing.length > 0) {
    throw new BrowserError('browser_action_failed', `The action '${input.action}' needs ${missing.map((field) => `'${field}'`).join(' and ')}.`);
  }
  // An existing session is taken without waiting, so calls queue on it in the order they came.
  const session = existingBrowserSession(context.resources) ?? (await browserSessionFor(context));
  const engineHits = input.action === 'web_search' && session.settings.searchUrl === undefined ? await searchWithEngines(input.query!, context) : undefined;
  return session.exclusive(async () => {
    const newTabs = session.watchNewTabs();
    let summary: string | undefined;
    let failure: unknown;
    try {
      summary = await perform(session, input, context, engineHits);
    } catch (error) {
      if (context.signal.aborted) throw error;
      failure = error;
    }
    await newTabs.settle(session.settings.navigationTimeoutMs);
    return reportAction(session, { summary, failure }, { listElements: !isStateProviderActive(context.resources) });
  });
}

function perform(session: BrowserSession, input: BrowserUseInput, context: ToolContext, engineHits: SearchHit[] | undefined): Promise<string> {
  const { signal } = context;
  const onPage = (what: string, action: Parameters<BrowserSession['run']>[1], timeoutMs?: number) =>
    session.run(what, action, { signal, timeoutMs }) as Promise<string>;
  switch (input.action) {
    case 'go_to_url':
      return onPage(`opening ${input.url}`, (tab) => goToUrl(session, tab, input.url!));
    case 'click_element':
      return onPage(`clicking element [${input.index}]`, (tab) => clickElement(session, tab, input.index!));
    case 'input_text':
      return onPage(`typing into element [${input.index}]`, (tab) => inputText(session, tab, input.index!, input.text!));
    case 'scroll_down':
    case 'scroll_up': {
      const direction = input.action === 'scroll_down' ? 'down' : 'up';
      return onPage(`scrolling ${direction}`, (tab) => scroll(tab, direction, input.scroll_amount));
    }
    case 'scroll_to_text':
      return onPage(`scrolling to ${JSON.stringify(input.text)}`, (tab) => scrollToText(tab, input.text!));
    case 'send_keys':
      return onPage(`pressing ${input.keys}`, (tab) => sendKeys(session, tab, input.keys!));
    case 'get_dropdown_options':
      return onPage(`reading the options of element [${input.index}]`, (tab) => getDropdownOptions(tab, input.index!));
    case 'select_dropdown_option':
      return onPage(`choosing an option of element [${input.index}]`, (tab) => selectDropdownOption(session, tab, input.index!, input.text!));
    case 'go_back':
      return onPage('going back', (tab) => goBack(session, tab));
    case 'refresh':
      return onPage('reloading the page', (tab) => refresh(session, tab));
    case 'web_search':
      return onPage(`searching for ${JSON.stringify(input.query)}`, (tab) => searchAndOpen(session, tab, input.query!, engineHits), session.settings.actionTimeoutMs * 2);
    case 'wait': {
      const seconds = Math.min(input.seconds ?? defaultWaitSeconds, maximumWaitSeconds);
      return onPage('waiting', (tab) => waitFor(tab, seconds, signal), seconds * 1000 + session.settings.actionTimeoutMs);
    }
    case 'extract_content':
      return extractFromActivePage(session, input.goal!, context.model, session.settings.extraction, signal);
    case 'switch_tab':
      return switchTab(session, input.tab_id!);
    case 'open_tab':
      return openTab(session, input.url!);
    case 'close_tab':
      return closeTab(session, input.tab_id);
  }
}
