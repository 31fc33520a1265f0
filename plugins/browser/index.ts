/**
 * A real Chromium the agent drives: the browser_use tool, extract_content for reading a page
 * against a goal, and the browser_state context provider that shows the current page each step.
 */
import browserState from './browser_state.js';
import browserUse from './browser_use.js';
import extractContent from './extract_content.js';

export default [browserUse, extractContent, browserState];
