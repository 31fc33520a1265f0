/** Every search engine by name, and the order they are tried in when none is configured. */
import type { ToolDefinition } from 'manus-runtime';
import type { SearchEngine } from '../search-types.js';
import { baidu } from './baidu.js';
import { bing } from './bing.js';
import { brave } from './brave.js';
import { duckDuckGo } from './duckduckgo.js';
import { google } from './google.js';
import { searxng } from './searxng.js';
import { tavily } from './tavily.js';

export const searchEngines: ReadonlyMap<string, SearchEngine> = new Map(
  [brave, tavily, searxng, duckDuckGo, bing, google, baidu].map((engine) => [engine.name, engine]),
);

const keyedEngines = [brave, tavily, searxng];
const openEngines = [duckDuckGo, bing, google, baidu];

/** Engines with a key (or base URL) configured come first: their APIs are not walled off. */
export function defaultEngineOrder(environment: NodeJS.ProcessEnv, endpoints: Record<string, string>): string[] {
  const configured = keyedEngines.filter((engine) => {
    const variable = engine.environmentVariable!;
    return Boolean(environment[variable.name] || (variable.holds === 'endpoint' && endpoints[engine.name]));
  });
  return [...configured, ...openEngines].map((engine) => engine.name);
}

/**
 * The endpoint settings of the engines that send the user's key (`endpoints.tavily` gets
 * TAVILY_API_KEY): set by a file the user has not trusted, each needs the `env` grant.
 */
export function keyedEndpointGrants(): NonNullable<ToolDefinition['settingGrants']> {
  return Object.fromEntries([...searchEngines.values()].flatMap((engine) => (engine.environmentVariable?.holds === 'key'
    ? [[`endpoints.${engine.name}`, { grant: 'env' as const, receives: [engine.environmentVariable.name] }]]
    : [])));
}
