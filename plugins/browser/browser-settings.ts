/**
 * Reads `tool_settings.browser_use` (and the extraction keys of `tool_settings.extract_content`).
 * Every key is checked here, with the key's name in the message, because tool settings are free
 * form in the YAML schema; an unknown key is refused with a suggestion, not ignored.
 */
import { didYouMean } from 'manus-runtime';
import { BrowserError } from './browser-errors.js';
import { DomainRules } from './domain-rules.js';

export interface BrowserProxy {
  server: string;
  username?: string;
  password?: string;
  /** Comma-separated hosts that bypass the proxy. */
  bypass?: string;
}

export interface ExtractionSettings {
  /** Characters of page markdown sent to the model per extraction call. */
  chunkCharacters: number;
  /** Most chunks read from one page; the rest of a longer page is reported as not read. */
  maxChunks: number;
}

export interface BrowserSettings {
  headless: boolean;
  executablePath: string;
  proxy?: BrowserProxy;
  /** Attach to a running browser (http://host:port or ws://...) instead of starting one. */
  cdpUrl?: string;
  extraArgs: string[];
  actionTimeoutMs: number;
  navigationTimeoutMs: number;
  domainRules: DomainRules;
  viewport: { width: number; height: number };
  /**
   * A search page to open for the web_search action, `{query}` standing for the encoded query.
   * Without one, the action searches through the web_search tool, with its settings.
   */
  searchUrl?: string;
  /** CSS selector of result links on that search page; without one, links to other sites are taken. */
  searchResultSelector?: string;
  /** Workspace-relative folder for downloads. */
  downloadsFolder: string;
  extraction: ExtractionSettings;
}

export const defaultChromiumPath = '/usr/bin/chromium';
export const chromiumPathVariable = 'MANUS_CHROMIUM_PATH';
export const defaultActionTimeoutSeconds = 30;
export const defaultNavigationTimeoutSeconds = 20;
export const defaultViewport = { width: 1280, height: 800 };
export const defaultChunkCharacters = 24_000;
export const defaultMaxChunks = 8;

/** Flags for a server without a display, GPU or user: quiet, no background traffic, no QUIC. */
export const chromiumArguments = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

export interface BrowserStateSettings {
  maxCharacters: number;
  /** Send a screenshot to vision models. */
  screenshot: boolean;
  screenshotQuality: number;
}

export const defaultStateCharacters = 6000;
export const defaultScreenshotQuality = 70;

const extractionKeys = ['extraction_chunk_characters', 'extraction_max_chunks'];

const browserKeys = [
  'headless',
  'executable_path',
  'proxy',
  'cdp_url',
  'extra_args',
  'action_timeout_seconds',
  'navigation_timeout_seconds',
  'allowed_domains',
  'blocked_domains',
  'viewport',
  'search_url',
  'search_result_selector',
  'downloads_folder',
  ...extractionKeys,
];

export function readBrowserSettings(
  settings: Record<string, unknown>,
  environment: Record<string, string | undefined> = process.env,
): BrowserSettings {
  if (settings.web_search !== undefined) {
    throw invalid('tool_settings.browser_use.web_search is not read: the web_search action searches through the web_search tool, so give its engines\' settings in tool_settings.web_search instead.');
  }
  const reader = new SettingsReader('browser_use', settings, browserKeys);
  const actionTimeoutSeconds = reader.positiveNumber('action_timeout_seconds') ?? defaultActionTimeoutSeconds;
  // Navigation gives up before the action's own limit, so a slow page is reported as slow
  // instead of being treated as hung.
  const navigationTimeoutSeconds = reader.positiveNumber('navigation_timeout_seconds')
    ?? Math.min(defaultNavigationTimeoutSeconds, actionTimeoutSeconds * 0.75);
  const searchUrl = reader.string('search_url');
  if (searchUrl !== undefined && !searchUrl.includes('{query}')) {
    throw invalid('tool_settings.browser_use.search_url must contain {query} where the search words go.');
  }
  return {
    headless: reader.boolean('headless') ?? true,
    executablePath: reader.string('executable_path') ?? environment[chromiumPathVariable] ?? defaultChromiumPath,
    proxy: reader.proxy('proxy'),
    cdpUrl: reader.string('cdp_url'),
    extraArgs: reader.stringList('extra_args'),
    actionTimeoutMs: actionTimeoutSeconds * 1000,
    navigationTimeoutMs: Math.min(navigationTimeoutSeconds, actionTimeoutSeconds) * 1000,
    domainRules: new DomainRules(reader.stringList('allowed_domains'), reader.stringList('blocked_domains')),
    viewport: reader.viewport('viewport') ?? defaultViewport,
    searchUrl,
    searchResultSelector: reader.string('search_result_selector'),
    downloadsFolder: reader.string('downloads_folder') ?? '.',
    extraction: readExtraction(reader),
  };
}

/** The extraction keys alone, for the extract_content tool's own settings. */
export function readExtractionSettings(settings: Record<string, unknown>): ExtractionSettings {
  return readExtraction(new SettingsReader('extract_content', settings, extractionKeys));
}

/** `tool_settings.browser_state`, the settings of the browser state context provider. */
export function readBrowserStateSettings(settings: Record<string, unknown>): BrowserStateSettings {
  const reader = new SettingsReader('browser_state', settings, ['max_characters', 'screenshot', 'screenshot_quality']);
  const maxCharacters = reader.positiveInteger('max_characters') ?? defaultStateCharacters;
  const screenshotQuality = reader.positiveInteger('screenshot_quality') ?? defaultScreenshotQuality;
  if (maxCharacters < 500) throw invalid('tool_settings.browser_state.max_characters must be at least 500.');
  if (screenshotQuality > 100) throw invalid('tool_settings.browser_state.screenshot_quality must be from 1 to 100.');
  return { maxCharacters, screenshot: reader.boolean('screenshot') ?? true, screenshotQuality };
}

function readExtraction(reader: SettingsReader): ExtractionSettings {
  return {
    chunkCharacters: reader.positiveInteger('extraction_chunk_characters') ?? defaultChunkCharacters,
    maxChunks: reader.positiveInteger('extraction_max_chunks') ?? defaultMaxChunks,
  };
}

function invalid(message: string): BrowserError {
  return new BrowserError('browser_settings_invalid', message);
}

class SettingsReader {
  private readonly prefix: string;
  private readonly settings: Record<string, unknown>;

  constructor(toolName: string, settings: Record<string, unknown>, knownKeys: string[]) {
    this.prefix = `tool_settings.${toolName}`;
    this.settings = settings;
    for (const key of Object.keys(settings)) {
      if (!knownKeys.includes(key)) {
        throw invalid(`${this.prefix} has an unknown key '${key}'${didYouMean(key, knownKeys)}. Known keys: ${knownKeys.join(', ')}.`);
      }
    }
  }

  boolean(key: string): boolean | undefined {
    const value = this.settings[key];
    if (value === undefined) return undefined;
    if (typeof value !== 'boolean') throw invalid(`${this.prefix}.${key} must be true or false, not ${JSON.stringify(value)}.`);
    return value;
  }

  string(key: string): string | undefined {
    const value = this.settings[key];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value.trim() === '') throw invalid(`${this.prefix}.${key} must be a non-empty string.`);
    return value;
  }

  stringList(key: string): string[] {
    const value = this.settings[key];
    if (value === undefined) return [];
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string' && item.trim() !== '')) {
      throw invalid(`${this.prefix}.${key} must be a list of non-empty strings.`);
    }
    return value;
  }

  positiveNumber(key: string): number | undefined {
    const value = this.settings[key];
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
      throw invalid(`${this.prefix}.${key} must be a positive number, not ${JSON.stringify(value)}.`);
    }
    return value;
  }

  positiveInteger(key: string): number | undefined {
    const value = this.positiveNumber(key);
    if (value !== undefined && !Number.isInteger(value)) throw invalid(`${this.prefix}.${key} must be a whole number, not ${value}.`);
    return value;
  }

  viewport(key: string): { width: number; height: number } | undefined {
    const value = this.settings[key];
    if (value === undefined) return undefined;
    const candidate = value as { width?: unknown; height?: unknown };
    const valid = (size: unknown) => typeof size === 'number' && Number.isInteger(size) && size >= 200 && size <= 10_000;
    if (typeof value !== 'object' || value === null || !valid(candidate.width) || !valid(candidate.height)) {
      throw invalid(`${this.prefix}.${key} must be {width, height} in pixels, each a whole number from 200 to 10000.`);
    }
    return { width: candidate.width as number, height: candidate.height as number };
  }

  proxy(key: string): BrowserProxy | undefined {
    const value = this.settings[key];
    if (value === undefined) return undefined;
    const candidate = value as Record<string, unknown>;
    if (typeof value !== 'object' || value === null || typeof candidate.server !== 'string' || candidate.server.trim() === '') {
      throw invalid(`${this.prefix}.${key} must be {server, username?, password?, bypass?} with server like "http://proxy.example:3128".`);
    }
    for (const field of Object.keys(candidate)) {
      if (!['server', 'username', 'password', 'bypass'].includes(field)) {
        throw invalid(`${this.prefix}.${key} has an unknown key '${field}'; use server, username, password and bypass.`);
      }
      if (typeof candidate[field] !== 'string') throw invalid(`${this.prefix}.${key}.${field} must be a string.`);
    }
    return candidate as unknown as BrowserProxy;
  }
}
