/**
 * `manus validate`: checks agents files, recipes and plugins without running anything and reports
 * every problem at once.
 */
import { permissionRuleDiagnostics } from '../services/permissions/rule-diagnostics.js';
import { serverOfToolName } from '../features/mcp/tool-names.js';
import { existsSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, resolve, sep } from 'node:path';
import { didYouMean } from '../contract/did-you-mean.js';
import { emptyAgentsConfig, loadAgentsSource } from './recipe/load-agents.js';
import { a2aAgentEnvironmentRequest, reviewAgentsTrust, trustRequestNote } from './recipe/recipe-requests.js';
import { a2aEnvironmentVariables, mergeA2aAgents } from '../features/a2a/a2a-config.js';
import { a2aAgentTools } from '../features/a2a/a2a-agent-tools.js';
import type { AgentConfig } from '../config/types.js';
import { isUserConfigData, loadUserConfig, readUserConfigSource } from './recipe/user-config.js';
import { readYamlFile } from '../config/yaml-source.js';
import { loadPluginFiles, loadPluginFolders, type PluginFolder } from '../kernel/plugin-loading/load-plugins.js';
import { findInstalledPack, mayNamePack, packOfAgentsFile, packRecipes } from '../features/packs/installed-packs.js';
import { packPartProblems, readPack, type Pack } from '../config/pack-manifest.js';
import { agentsFilesFor, loadAgentsConfig, packageAgentsFile, pluginFoldersFor, resolveRecipe, unknownToolCode } from './recipe/resolve-recipe.js';
import { ConfigError, formatDiagnostic, formatLocation, type Diagnostic } from '../contract/errors.js';

const pluginExtensions = new Set(['.ts', '.mts', '.js', '.mjs']);

export async function validateFiles(files: string[], cwd: string): Promise<Diagnostic[]> {
  const diagnostics: Diagnostic[] = [];
  const paths: string[] = [];
  for (const argument of files) {
    const pack = packArgument(argument, cwd, diagnostics);
    if (pack === 'not a pack') paths.push(resolve(cwd, argument));
    else if (pack) diagnostics.push(...(await validatePack(pack, cwd)));
  }
  const pluginFiles = paths.filter((file) => pluginExtensions.has(extname(file)));
  // Plugin files are checked together: two of them defining one tool conflict in a run too.
  if (pluginFiles.length > 0) diagnostics.push(...(await validatePlugins(pluginFiles)));
  for (const file of paths.filter((path) => !pluginExtensions.has(extname(path)))) diagnostics.push(...(await validateYaml(file, cwd)));
  return unique(diagnostics);
}

/**
 * A recipe reports its agents file's warnings again; say each thing once. And a warning that a
 * recipe's validation made an error (a tool no plugin defines, for the agents file alone and for
 * the recipe using it) is said once, as the error.
 */
function unique(diagnostics: Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  const placeOf = (diagnostic: Diagnostic) => `${diagnostic.code}@${formatLocation(diagnostic.location)}`;
  const errors = new Set(diagnostics.filter((diagnostic) => diagnostic.severity === 'error' && diagnostic.code !== undefined).map(placeOf));
  return diagnostics.filter((diagnostic) => {
    if (diagnostic.severity === 'warning' && diagnostic.code !== undefined && errors.has(placeOf(diagnostic))) return false;
    const key = formatDiagnostic(diagnostic);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * A pack named by its folder, or by the name it is installed under; 'not a pack' for a file or a
 * path that is neither (it is then reported as a file that cannot be read).
 */
function packArgument(argument: string, cwd: string, diagnostics: Diagnostic[]): Pack | undefined | 'not a pack' {
  const path = resolve(cwd, argument);
  if (existsSync(path) && statSync(path).isDirectory()) {
    const pack = readPack(path, diagnostics);
    if (!pack && !diagnostics.some((diagnostic) => diagnostic.location?.file === join(path, 'package.json'))) {
      diagnostics.push({ severity: 'error', message: 'this folder is not a pack: a pack has a package.json with a "manus" field (manus pack init <name> makes one)', location: { file: path } });
    }
    return pack;
  }
  if (existsSync(path) || !mayNamePack(argument)) return 'not a pack';
  const pack = findInstalledPack(argument, cwd);
  if (pack) return pack;
  diagnostics.push({ severity: 'error', message: `no file ${path}, and no pack '${argument}' is installed here (in the node_modules folders at or above ${cwd})`, location: { file: path } });
  return undefined;
}

/** A whole pack: its package.json, agents file, plugins and every recipe, as runs would load them. */
async function validatePack(pack: Pack, cwd: string): Promise<Diagnostic[]> {
  const diagnostics = packPartProblems(pack);
  const recipes = packRecipes(pack);
  if (recipes.length === 0 && existsSync(pack.recipesFolder)) {
    diagnostics.push({ severity: 'error', message: `the pack has no recipes: put recipe YAML files in ${pack.recipesFolder}`, location: { file: pack.manifestFile } });
  }
  const pluginFolders = existsSync(pack.pluginsFolder) ? [{ path: pack.pluginsFolder, pack: pack.name }] : [];
  if (existsSync(pack.agentsFile)) diagnostics.push(...(await validateAgentsFile(pack.agentsFile, cwd, pluginFolders)));
  else if (pluginFolders.length > 0) diagnostics.push(...(await loadPluginFolders(pluginFolders, { checkSchemas: true })).diagnostics);
  for (const recipe of recipes) diagnostics.push(...(await validateYaml(recipe.file, cwd)));
  return diagnostics;
}

async function validatePlugins(files: string[]): Promise<Diagnostic[]> {
  const diagnostics: Diagnostic[] = [];
  const seen = new Set<string>();
  const readable = files.filter((file) => {
    if (!existsSync(file)) {
      diagnostics.push({ severity: 'error', message: 'cannot read the plugin: file not found', location: { file } });
      return false;
    }
    const real = realpathSync(file);
    if (seen.has(real)) return false;
    seen.add(real);
    return true;
  });
  const { tools, contextProviders } = await loadPluginFiles(readable, diagnostics, { checkSchemas: true });
  const defining = new Set([...tools.values(), ...contextProviders.values()].map((loaded) => loaded.file));
  for (const file of readable) {
    // A plugin folder's index is also answered for by a problem in one of the folder's own modules.
    const own = (reported: string | undefined) => reported === file || (/^index\.[mc]?[jt]s$/.test(basename(file)) && !!reported?.startsWith(dirname(file) + sep));
    if (defining.has(file) || diagnostics.some((diagnostic) => own(diagnostic.location?.file))) continue;
    diagnostics.push({ severity: 'error', message: 'the file exports no tool and no context provider', location: { file } });
  }
  return diagnostics;
}

async function validateYaml(file: string, cwd: string): Promise<Diagnostic[]> {
  const { source, diagnostics } = readYamlFile(file);
  if (!source) return diagnostics;
  if (isAgentsFile(source.data)) {
    // A pack's agents file names the pack's tools: they are checked against its plugins.
    const pack = packOfAgentsFile(file);
    return validateAgentsFile(file, cwd, pack && existsSync(pack.pluginsFolder) ? [{ path: pack.pluginsFolder, pack: pack.name }] : []);
  }
  if (isUserConfigData(source.data)) return readUserConfigSource(source).diagnostics;
  try {
    const plan = await resolveRecipe(file, { cwd, strictParameters: false, checkSchemas: true, reportTrust: true });
    return plan.warnings;
  } catch (error) {
    if (ConfigError.isInstance(error)) return error.diagnostics;
    throw error;
  }
}

function isPackageAgentsFile(file: string): boolean {
  return existsSync(packageAgentsFile) && realpathSync(file) === realpathSync(packageAgentsFile);
}

function isAgentsFile(data: unknown): boolean {
  if (!data || typeof data !== 'object') return false;
  const keys = Object.keys(data);
  return !keys.includes('name') && (keys.includes('agents') || keys.includes('llm'));
}

async function validateAgentsFile(file: string, cwd: string, packPlugins: PluginFolder[] = []): Promise<Diagnostic[]> {
  const { source, diagnostics } = readYamlFile(file);
  if (!source) return diagnostics;
  const config = emptyAgentsConfig();
  const trusted = isPackageAgentsFile(file);
  const problems = loadAgentsSource(source, config, trusted);
  if (problems.some((problem) => problem.severity === 'error')) return problems;
  if (!trusted) {
    // Another agents file may tighten the package's agents, never loosen them.
    config.trustedAgents = loadAgentsConfig([packageAgentsFile]).config.trustedAgents;
  }
  const plugins = await loadPluginFolders([...pluginFoldersFor(cwd), ...packPlugins], { checkSchemas: packPlugins.length > 0 });
  if (!trusted) {
    const tools = new Map([...plugins.tools].map(([name, loaded]) => [name, loaded.tool]));
    const review = reviewAgentsTrust(config, tools);
    problems.push(...review.removals, ...review.requests.map(trustRequestNote));
    for (const remote of config.a2aAgents ?? []) {
      const request = a2aAgentEnvironmentRequest(remote, a2aEnvironmentVariables(remote));
      if (request) problems.push(trustRequestNote(request));
    }
  }
  // The user's own remote agents are offered to every run, so an agent may name them too.
  const remoteAgents = mergeA2aAgents(loadUserConfig(process.env).config.a2aAgents, config.a2aAgents);
  // Profiles may come from the other agents files a run would load too.
  const profiles = new Set([...loadAgentsConfig(agentsFilesFor(undefined, cwd)).config.profiles.keys(), ...config.profiles.keys()]);
  problems.push(...plugins.diagnostics);
  const allTools = new Map([...plugins.tools].map(([name, loaded]) => [name, loaded.tool]));
  const serverNames = [...config.mcpServers.map((server) => server.name)];
  for (const agent of config.agents.values()) {
    problems.push(...permissionRuleDiagnostics({
      settings: agent.permissions,
      source: `agent '${agent.name}'`,
      tools: allTools,
      knownByName: (name) => name.startsWith('agent_') || name.startsWith('a2a_') || serverOfToolName(name, serverNames) !== undefined,
    }));
    const remote = a2aAgentTools(agent, remoteAgents, plugins.tools, {}, problems);
    for (const tool of agent.tools) {
      if (plugins.tools.has(tool) || remote.names.includes(tool)) continue;
      problems.push(toolNotInTheseFolders(agent, tool, plugins.tools.keys()));
    }
    for (const provider of agent.contextProviders) {
      if (plugins.contextProviders.has(provider)) continue;
      problems.push({
        severity: 'error',
        message: `agent '${agent.name}': no plugin defines the context provider '${provider}'${didYouMean(provider, plugins.contextProviders.keys())}`,
        location: agent.location,
      });
    }
    if (agent.llm !== 'default' && !profiles.has(agent.llm)) {
      problems.push({
        severity: 'error',
        message: `agent '${agent.name}' uses the model profile '${agent.llm}', which is not declared under llm:${didYouMean(agent.llm, profiles)}`,
        location: agent.location,
      });
    }
  }
  return problems;
}

/**
 * On its own, an agents file cannot say which plugin folders its agents will have: a recipe using
 * the agent may add the folder defining the tool. A run, or validating that recipe, makes it an error.
 */
function toolNotInTheseFolders(agent: AgentConfig, tool: string, available: Iterable<string>): Diagnostic {
  return {
    severity: 'warning',
    message: `agent '${agent.name}' lists the tool '${tool}', which no plugin here defines${didYouMean(tool, available)}; a recipe using this agent must add a plugin folder that does`,
    location: agent.toolLocations[tool] ?? agent.location,
    code: unknownToolCode,
  };
}
