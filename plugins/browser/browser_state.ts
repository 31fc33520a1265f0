/**
 * The browser's live state for the model each step, while the browser is in use: URL, title,
 * tabs, scroll position and the numbered interactive elements (and, for a vision model, a
 * screenshot with the numbers drawn on). It never starts a browser, and stays quiet when the
 * browser has not been used in the last few turns, to save tokens.
 *
 * Settings (`tool_settings.browser_state`): max_characters (default 6000), screenshot (default
 * true; sent to vision models only), screenshot_quality (JPEG, default 70).
 */
import { defineContextProvider } from 'manus-runtime';
import { readBrowserStateSettings } from './browser-settings.js';
import { renderBrowserState } from './browser-state.js';
import { existingBrowserSession, markStateProviderActive } from './session-registry.js';

/** Tools whose use makes the page's state worth showing. */
const browserTools = ['browser_use', 'extract_content'];
/** The state is rendered between steps; a page that does not answer must not hold the run up. */
const renderTimeoutMs = 5000;

export default defineContextProvider({
  name: 'browser_state',
  description: 'The current web page (URL, title, tabs, scroll position, numbered interactive elements) while the browser is in use.',
  async render(input) {
    markStateProviderActive(input.resources);
    const settings = readBrowserStateSettings(input.settings);
    if (!browserTools.some((tool) => input.recentTools.has(tool))) return undefined;
    const session = existingBrowserSession(input.resources);
    if (!session) return undefined;
    const state = await renderBrowserState(session, {
      maxCharacters: settings.maxCharacters,
      screenshot: input.vision && settings.screenshot,
      screenshotQuality: settings.screenshotQuality,
      timeoutMs: renderTimeoutMs,
    });
    return state && { text: state.text, images: state.images };
  },
});
