/**
 * Errors of the browser tools. They extend ToolError, so a failed action goes back to the model
 * as an error result that says what to do next, and the run goes on.
 */
import { ManusError, ToolError } from 'manus-runtime';

export type BrowserErrorCode =
  /** Chromium could not be started or reached (missing executable, bad cdp_url). */
  | 'browser_unavailable'
  /** `tool_settings.browser_use` has a value of the wrong type or meaning. */
  | 'browser_settings_invalid'
  /** The call needs an open page and there is none yet. */
  | 'browser_no_page'
  /** The element index is not in the current list, or the element has gone from the page. */
  | 'browser_element_not_found'
  /** The URL's host is outside allowed_domains or inside blocked_domains. */
  | 'browser_domain_blocked'
  /** The action ran past its time limit; the page was checked and replaced if it had hung. */
  | 'browser_timeout'
  /** The page's renderer crashed; the tab was replaced. */
  | 'browser_page_crashed'
  /** The action does not fit the element or the page (typing into a link, an unknown tab id). */
  | 'browser_action_failed';

const browserErrorMarker = 'manus.error.BrowserError';
const browserErrorSymbol = Symbol.for(browserErrorMarker);

export class BrowserError extends ToolError {
  private readonly [browserErrorSymbol] = true;

  constructor(code: BrowserErrorCode, message: string) {
    super(message, code);
  }

  static isInstance(error: unknown): error is BrowserError {
    return ManusError.hasMarker(error, browserErrorMarker);
  }
}

/** The message of anything thrown: Playwright and Node throw Errors, page scripts may throw anything. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
