/**
 * `manus mcp serve`: the chosen plugin tools and recipes, served over stdio or Streamable HTTP.
 * Everything is loaded and checked before the server starts, so a typo in a tool name or a broken
 * recipe is a usage error rather than a server that fails later.
 */
import { locateRecipe } from '../../features/packs/locate-recipe.js';
import { agentsFilesFor, loadAgentsConfig } from '../../runs/recipe/resolve-recipe.js';
import { agentDefaults } from '../../config/defaults.js';
import { readModelProfile } from '../../runs/recipe/load-agents.js';
import { ConfigError, UsageError } from '../../contract/errors.js';
import { SecretRedactor } from '../../services/secret-redaction.js';
import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Recipe } from '../../config/types.js';
import { createConnectionServer, type ConnectionServer } from './connection-server.js';
import { requireTokenBeyondLoopback, type HttpServeSettings } from './http-serving.js';
import { loadPluginTools } from './plugin-tools.js';
import { loadRecipeTool } from './recipe-tools.js';
import type { ServedTool } from './served-tool.js';
import { ToolSession } from './tool-session.js';

export interface McpServeOptions extends HttpServeSettings {
  cwd: string;
  environment: Record<string, string | undefined>;
  /** Plugin tools to serve, by name. */
  tools: string[];
  /** Extra plugin folders to load tools from, besides the package's and ./plugins. */
  pluginFolders: string[];
  /** Recipe files, each served as one tool. */
  recipes: string[];
  transport: 'stdio' | 'http';
  /** The folder the user chose for plugin tools to work in; each connection gets a new one otherwise. */
  workspace?: string;
}

export interface McpServing {
  /** Where an HTTP server listens. */
  url?: string;
  /** Settles when the client ended a stdio connection (an HTTP server ends only when closed). */
  ended: Promise<void>;
  /** Stops serving: cancels running calls and disposes everything the tools and runs started. */
  close(): Promise<void>;
}

export async function startMcpServer(options: McpServeOptions): Promise<McpServing> {
  if (options.tools.length === 0 && options.recipes.length === 0) {
    throw new UsageError('nothing to serve: name tools with --tools a,b or recipes with --recipe file');
  }
  if (options.transport === 'http') requireTokenBeyondLoopback(options);
  const workspace = options.workspace === undefined ? undefined : chosenWorkspace(options.workspace, options.cwd);
  const { tools, recipes } = await servedTools(options);
  const { config: agentsConfig } = loadAgentsConfig(agentsFilesFor(undefined, options.cwd));
  const profile = agentsConfig.profiles.get(agentDefaults.llm) ?? readModelProfile(agentDefaults.llm);
  const redactor = SecretRedactor.forRun(profile, options.environment);
  const newConnection = (): ConnectionServer => createConnectionServer(tools, {
    version: options.version,
    newSession: () => new ToolSession({
      cwd: options.cwd,
      environment: options.environment,
      runsDirectory: options.runsDirectory,
      profile,
      agentsConfig,
      redactor,
      trustGrants: new Set(options.trust),
      sandbox: options.sandbox,
      tools: tools.map((tool) => tool.name),
      workspace,
      served: { pluginFolders: options.pluginFolders.map((folder) => resolve(options.cwd, folder)), recipes },
    }),
  });

  if (options.transport === 'stdio') {
    const { serveStdio } = await import('./stdio-server.js');
    return serveStdio(newConnection());
  }
  const { serveHttp } = await import('./http-server.js');
  const serving = await serveHttp(newConnection, { host: options.host, port: options.port, allowedHosts: options.allowedHosts, token: options.token });
  return { url: serving.url, ended: new Promise(() => undefined), close: serving.close };
}

/** The user's folder, checked once, by its real path, so a link swapped later does not move it. */
function chosenWorkspace(folder: string, cwd: string): string {
  const path = resolve(cwd, folder);
  if (!statSync(path, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`--workspace ${folder}: ${path} is not a folder`);
  return realpathSync(path);
}

async function servedTools(options: McpServeOptions): Promise<{ tools: ServedTool[]; recipes: Recipe[] }> {
  const fromPlugins = await loadPluginTools(options.tools, { cwd: options.cwd, pluginFolders: options.pluginFolders });
  const fromRecipes: ServedTool[] = [];
  const recipes: Recipe[] = [];
  for (const file of options.recipes) {
    const served = await loadRecipeTool(locateRecipe(file, options.cwd).file, {
      cwd: options.cwd,
      environment: options.environment,
      runsDirectory: options.runsDirectory,
      overrides: { trust: options.trust, sandbox: options.sandbox },
    });
    fromRecipes.push(served.tool);
    recipes.push(served.recipe);
  }
  const tools = [...fromPlugins, ...fromRecipes];
  const seen = new Set<string>();
  for (const tool of tools) {
    if (seen.has(tool.name)) throw new ConfigError([{ severity: 'error', message: `two served tools are named '${tool.name}': give each recipe a distinct name, or serve fewer tools`, location: { file: options.cwd } }]);
    seen.add(tool.name);
  }
  return { tools, recipes };
}
