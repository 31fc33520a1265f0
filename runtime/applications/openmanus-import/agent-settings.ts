/**
 * OpenManus's `[browser]`, `[search]` and `[sandbox]` sections as agent settings: the browser_use
 * and web_search tool settings, and the sandbox of the agents that run code. The other sections
 * it knows (`[mcp]`, `[runflow]`, `[daytona]`) have no place in agents.yaml; each is reported.
 */
import type { SandboxYaml } from '../../config/schema-types.generated.js';
import { isTable, type OpenManusSource, type TomlTable } from './openmanus-files.js';
import { settingName, type ImportReport } from './import-findings.js';

export interface ImportedAgentSettings {
  /** Settings to add to every agent that uses the tool, by tool name. */
  toolSettings: Record<string, Record<string, unknown>>;
  /** The sandbox of every agent that runs code, when OpenManus used its sandbox. */
  sandbox?: Exclude<SandboxYaml, string>;
}

/** The image OpenManus's sandbox uses by default: bare Python, without what the runtime's agents import. */
const openManusDefaultImage = 'python:3.12-slim';

const searchEngineNames: Record<string, string> = { google: 'google', duckduckgo: 'duckduckgo', baidu: 'baidu', bing: 'bing' };

export function importAgentSettings(source: OpenManusSource, report: ImportReport): ImportedAgentSettings {
  const settings: ImportedAgentSettings = { toolSettings: {} };
  const browser = section(source, report, 'browser');
  if (browser) {
    const browserUse = importBrowser(source, report, browser);
    if (Object.keys(browserUse).length > 0) settings.toolSettings.browser_use = browserUse;
  }
  const search = section(source, report, 'search');
  if (search) {
    const webSearch = importSearch(source, report, search);
    // The browser's web_search action searches through the web_search tool, with these settings too.
    if (Object.keys(webSearch).length > 0) settings.toolSettings.web_search = webSearch;
  }
  const sandbox = section(source, report, 'sandbox');
  if (sandbox) settings.sandbox = importSandbox(source, report, sandbox);
  reportOtherSections(source, report);
  return settings;
}

function section(source: OpenManusSource, report: ImportReport, name: string): TomlTable | undefined {
  const value = source.data[name];
  if (value === undefined) return undefined;
  if (isTable(value)) return value;
  report.notMapped(name, `must be a table ([${name}])`, source.locate([], name));
  return undefined;
}

function importBrowser(source: OpenManusSource, report: ImportReport, browser: TomlTable): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  const at = (key: string) => source.locate(['browser'], key);
  const reader = valueReader(source, report, ['browser'], browser);
  for (const [key, value] of Object.entries(browser)) {
    const setting = settingName(['browser'], key);
    switch (key) {
      case 'headless':
        if (reader.boolean(key) !== undefined) result.headless = value;
        break;
      case 'disable_security':
        if (value === true) report.notMapped(setting, 'the browser keeps its web security (same-origin policy, certificate checks); nothing turns it off', at(key));
        break;
      case 'extra_chromium_args': {
        const args = reader.stringList(key);
        if (args && args.length > 0) result.extra_args = args;
        break;
      }
      case 'chrome_instance_path': {
        const path = reader.text(key);
        if (path) result.executable_path = path;
        break;
      }
      case 'cdp_url': {
        const url = reader.text(key);
        if (url) result.cdp_url = url;
        break;
      }
      case 'wss_url':
        if (reader.text(key)) report.notMapped(setting, 'it connects to a Playwright browser server; the browser here attaches over the Chrome DevTools Protocol only (cdp_url)', at(key));
        break;
      case 'proxy': {
        const proxy = importProxy(source, report, value);
        if (proxy) result.proxy = proxy;
        break;
      }
      default:
        report.notMapped(setting, 'not a [browser] setting this import knows', at(key));
    }
  }
  return result;
}

function importProxy(source: OpenManusSource, report: ImportReport, value: unknown): Record<string, string> | undefined {
  const path = ['browser', 'proxy'];
  if (!isTable(value)) {
    report.notMapped(settingName(['browser'], 'proxy'), 'must be a table ([browser.proxy])', source.locate(['browser'], 'proxy'));
    return undefined;
  }
  const reader = valueReader(source, report, path, value);
  const proxy: Record<string, string> = {};
  for (const key of Object.keys(value)) {
    if (key === 'server' || key === 'username') {
      const text = reader.text(key);
      if (text) proxy[key] = text;
    } else if (key === 'password') {
      report.notMapped(settingName(path, key), 'the browser\'s proxy settings take no password from an environment variable, and a password is never written to the YAML; use a proxy that needs none, or one on your own machine that adds it', source.locate(path, key));
    } else {
      report.notMapped(settingName(path, key), 'not a [browser.proxy] setting this import knows', source.locate(path, key));
    }
  }
  if (proxy.server) return proxy;
  if (Object.keys(value).length > 0) report.notMapped(settingName(path), 'a proxy needs a server', source.locate(path));
  return undefined;
}

function importSearch(source: OpenManusSource, report: ImportReport, search: TomlTable): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  const at = (key: string) => source.locate(['search'], key);
  const reader = valueReader(source, report, ['search'], search);
  const engines: string[] = [];
  const addEngine = (key: string, name: string) => {
    const engine = searchEngineNames[name.trim().toLowerCase()];
    if (engine) engines.push(engine);
    else report.notMapped(settingName(['search'], key), `the engine "${name}" is not one OpenManus offers (Google, DuckDuckGo, Baidu, Bing)`, at(key));
  };
  for (const key of Object.keys(search)) {
    const setting = settingName(['search'], key);
    switch (key) {
      case 'engine': {
        const engine = reader.text(key);
        if (engine) addEngine(key, engine);
        break;
      }
      case 'fallback_engines':
        break;
      case 'retry_delay': {
        const seconds = reader.positiveNumber(key);
        if (seconds !== undefined) result.retry_delay_ms = seconds * 1000;
        break;
      }
      case 'max_retries': {
        const retries = reader.wholeNumber(key);
        if (retries !== undefined) result.retries = retries;
        break;
      }
      case 'lang':
      case 'country':
        report.notMapped(setting, `web_search takes ${key} with each search, and has no default for it; say the language or country in the task`, at(key));
        break;
      default:
        report.notMapped(setting, 'not a [search] setting this import knows', at(key));
    }
  }
  // The fallbacks come after the primary engine, whatever order the keys are written in; OpenManus's primary is Google unless set.
  if (search.engine === undefined && search.fallback_engines !== undefined) engines.push('google');
  for (const name of reader.stringList('fallback_engines') ?? []) addEngine('fallback_engines', name);
  if (engines.length > 0) result.engines = [...new Set(engines)];
  return result;
}

function importSandbox(source: OpenManusSource, report: ImportReport, sandbox: TomlTable): Exclude<SandboxYaml, string> | undefined {
  const at = (key: string) => source.locate(['sandbox'], key);
  const reader = valueReader(source, report, ['sandbox'], sandbox);
  if (reader.boolean('use_sandbox') !== true) {
    const others = Object.keys(sandbox).filter((key) => key !== 'use_sandbox');
    const reason = 'OpenManus ran code on the host; here code always runs in a sandbox (bubblewrap, else Docker), so the agents keep sandbox: auto';
    report.notMapped(settingName(['sandbox'], 'use_sandbox'), others.length > 0 ? `${reason}, and the other [sandbox] settings (${others.join(', ')}), which OpenManus used only with use_sandbox = true, are left out` : reason, at('use_sandbox'));
    return undefined;
  }
  const result: Exclude<SandboxYaml, string> = { kind: 'docker' };
  report.note(settingName(['sandbox'], 'use_sandbox'), 'OpenManus\'s sandbox is a Docker container: the agents that run code get sandbox kind docker', at('use_sandbox'));
  for (const key of Object.keys(sandbox)) {
    const setting = settingName(['sandbox'], key);
    switch (key) {
      case 'use_sandbox':
        break;
      case 'image': {
        const image = reader.text(key);
        if (image === openManusDefaultImage) {
          report.notMapped(setting, `${openManusDefaultImage} is OpenManus's default; the runtime's own sandbox image has Python with the packages its agents import`, at(key));
        } else if (image) result.image = image;
        break;
      }
      case 'memory_limit': {
        const megabytes = memoryMegabytes(sandbox[key]);
        if (megabytes !== undefined && megabytes >= 16) result.memory_mb = megabytes;
        else report.notMapped(setting, 'must be a size such as "512m" or "1g", at least 16 MB', at(key));
        break;
      }
      case 'cpu_limit': {
        const cpus = reader.positiveNumber(key);
        if (cpus !== undefined) result.cpus = cpus;
        break;
      }
      case 'network_enabled': {
        const network = reader.boolean(key);
        if (network !== undefined) result.network = network;
        break;
      }
      case 'work_dir':
        report.notMapped(setting, 'commands start in the run\'s workspace, which the runtime mounts into the sandbox itself', at(key));
        break;
      case 'timeout':
        report.notMapped(setting, 'each bash and python_execute call has its own time limit (their timeout argument and settings)', at(key));
        break;
      default:
        report.notMapped(setting, 'not a [sandbox] setting this import knows', at(key));
    }
  }
  return result;
}

/** Sections agents.yaml has no place for, and any section this import does not know. */
function reportOtherSections(source: OpenManusSource, report: ImportReport): void {
  const mapped = new Set(['llm', 'browser', 'search', 'sandbox']);
  for (const [name, value] of Object.entries(source.data)) {
    if (mapped.has(name)) continue;
    const entries = isTable(value) ? Object.keys(value) : [];
    const each = (reason: (key: string) => string) => {
      if (entries.length === 0) report.notMapped(settingName([name]), reason(''), source.locate([name]));
      for (const key of entries) report.notMapped(settingName([name], key), reason(key), source.locate([name], key));
    };
    switch (name) {
      case 'mcp':
        each((key) => (key === 'server_reference'
          ? 'the Python module OpenManus\'s MCP agent starts as its server; `manus mcp serve` serves this runtime\'s tools and recipes instead'
          : 'not an [mcp] setting this import knows; MCP servers come from mcp.json (--mcp)'));
        break;
      case 'runflow':
        each((key) => (key === 'use_data_analysis_agent'
          ? 'a planning flow\'s executors are chosen in its recipe: recipes/planning-flow.yaml gives steps to manus and data_analysis'
          : 'not a [runflow] setting this import knows'));
        break;
      case 'daytona':
        each((key) => `there is no Daytona sandbox here (bubblewrap, Docker or the host)${/key|password|token|secret/i.test(key) ? '; the value was not copied anywhere' : ''}`);
        break;
      default:
        each(() => 'not an OpenManus setting this import knows');
    }
  }
}

/** "512m", "1g", "2048k" or a number of bytes, in megabytes. */
function memoryMegabytes(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return Math.floor(value / (1024 * 1024));
  if (typeof value !== 'string') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([bkmg]?)b?\s*$/i.exec(value);
  if (!match) return undefined;
  const perMegabyte: Record<string, number> = { '': 1 / (1024 * 1024), b: 1 / (1024 * 1024), k: 1 / 1024, m: 1, g: 1024 };
  return Math.floor(Number(match[1]) * perMegabyte[match[2]!.toLowerCase()]!);
}

/** Reads typed values of one table, reporting a value of the wrong type as not mapped. */
function valueReader(source: OpenManusSource, report: ImportReport, path: string[], table: TomlTable) {
  const wrong = (key: string, expected: string) => report.notMapped(settingName(path, key), `must be ${expected}`, source.locate(path, key));
  return {
    boolean(key: string): boolean | undefined {
      const value = table[key];
      if (value === undefined || typeof value === 'boolean') return value;
      wrong(key, 'true or false');
      return undefined;
    },
    text(key: string): string | undefined {
      const value = table[key];
      if (value === undefined) return undefined;
      if (typeof value === 'string') return value.trim() === '' ? undefined : value;
      wrong(key, 'a string');
      return undefined;
    },
    stringList(key: string): string[] | undefined {
      const value = table[key];
      if (value === undefined) return undefined;
      if (Array.isArray(value) && value.every((item) => typeof item === 'string' && item.trim() !== '')) return value as string[];
      wrong(key, 'a list of strings');
      return undefined;
    },
    positiveNumber(key: string): number | undefined {
      const value = table[key];
      if (value === undefined) return undefined;
      if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value;
      wrong(key, 'a number above 0');
      return undefined;
    },
    wholeNumber(key: string): number | undefined {
      const value = table[key];
      if (value === undefined) return undefined;
      if (Number.isInteger(value) && (value as number) >= 0) return value as number;
      wrong(key, 'a whole number, 0 or more');
      return undefined;
    },
  };
}
