/**
 * A real browser for the agent (Chromium through Playwright), with the actions and parameter
 * names OpenManus's browser_use has. Elements are addressed by the numbers of the interactive
 * element list, which the browser_state context provider shows each step (or, without it, each
 * result). One browser per run, started on first use and closed when the run ends.
 */
import { defineTool } from 'manus-runtime';
import { checkBrowser } from './browser-doctor.js';
import { browserUseParameters, runBrowserAction, type BrowserUseInput } from './browser-use-action.js';

export default defineTool<BrowserUseInput>({
  name: 'browser_use',
  permissionArguments: { url: 'url', action: 'text' },
  // What Chromium runs, with which arguments, or which browser it attaches to, is the user's choice.
  settingGrants: { executable_path: 'browser', extra_args: 'browser', cdp_url: 'browser' },
  // The web_search action searches with the web_search tool's engines, settings and permissions.
  calls: ['web_search'],
  description: 'Control a web browser. Elements are addressed by index in the browser state\'s list of interactive elements.',
  guide: [
    "Elements are addressed by 'index', the number in brackets in the list of interactive elements (shown in the browser state).",
    'Actions:',
    "- go_to_url {url}: open a page in the current tab. open_tab {url}: open it in a new tab.",
    '- click_element {index}: click an element. input_text {index, text}: replace the text of an input or text area.',
    '- get_dropdown_options {index} and select_dropdown_option {index, text}: list and choose options of a drop-down list.',
    '- scroll_down / scroll_up {scroll_amount?}: scroll by pixels (default one screen). scroll_to_text {text}: scroll to visible text.',
    "- send_keys {keys}: press keys, e.g. 'Enter', 'Escape', 'Control+a', 'Tab Tab Enter'.",
    '- go_back, refresh, wait {seconds?}.',
    '- web_search {query}: search the web and open the first result; the other results are listed.',
    '- extract_content {goal}: read the whole main content of the page and return what the goal asks for.',
    '- switch_tab {tab_id}, close_tab {tab_id?}: tab numbers are shown in the browser state.',
  ].join('\n'),
  parameters: browserUseParameters,
  sequential: true,
  doctor: checkBrowser,
  execute: (input, context) => runBrowserAction(input, context),
});
