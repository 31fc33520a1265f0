/**
 * Loads tool plugins from folders. A plugin is a file in the folder, or a sub-folder through its
 * `index` file (its other files are its own modules). Built-in plugins run from the copies compiled
 * into the command's bundle when those are current, and only when a run uses them; any other plugin
 * always loads, a `.ts` one compiled on the fly (load-typescript-module.ts), so a plugin dropped into
 * a folder works without a build step.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, relative } from 'node:path';
import type { Diagnostic, SourceLocation } from '../../contract/errors.js';
import { packageRoot } from '../../config/package-root.js';
import type { ContextProviderDefinition } from '../../contract/context-provider.js';
import type { AnyToolDefinition } from '../../contract/tool.js';
import { loadModuleFile } from './load-module-file.js';
import { checkToolSchema } from '../tool-arguments.js';
import { isStepKindDefinition, stepKindExportName, type AnyStepKindDefinition } from '../../contract/step-kind.js';
import { builtInManifest, type BuiltInPlugin } from './built-in-plugins.js';
import { kernelTools } from './kernel-tools.js';
import { describeToolProblems } from './tool-shape.js';
import { qualifiedName } from './qualified-names.js';
import { scanPluginFolder } from './plugin-scan.js';
import { indexFileNames, isPluginFile, pluginFilesIn } from './plugin-files.js';
import { publicApi } from './public-api.js';
import { needsModuleLoader, typeScriptModuleLoader, type TypeScriptModuleLoader } from './load-typescript-module.js';
import { TranspileError, esbuildTranspiler } from '../../services/plugin-compilation/typescript-transpiler.js';
import { compiledPluginsFolder, openCompiledCodeCache } from '../../services/plugin-compilation/compiled-code-cache.js';

export { pluginFilesIn } from './plugin-files.js';

export interface LoadedTool {
  tool: AnyToolDefinition;
  file: string;
  /** The pack whose plugins folder defines it. */
  pack?: string;
}

export interface LoadedContextProvider {
  provider: ContextProviderDefinition;
  file: string;
}

export interface LoadedStepKind {
  stepKind: AnyStepKindDefinition;
  file: string;
}

export interface LoadedPlugins {
  tools: Map<string, LoadedTool>;
  contextProviders: Map<string, LoadedContextProvider>;
  /** Kinds of flow steps, by kind. */
  stepKinds: Map<string, LoadedStepKind>;
  diagnostics: Diagnostic[];
  /** Names of built-in plugins left unloaded because the run does not use them (for suggestions). */
  unloadedNames?: string[];
  /**
   * Tools that more than one pack defines, by name: an agent must name the one it means as
   * `name@pack`. Every pack's tools are also kept under their qualified names.
   */
  ambiguousTools?: Map<string, LoadedTool[]>;
  /** With `importOnlyBuiltIns`: the names the other plugins' sources declare, read and not run (`name@pack` too), with each place declaring them. */
  declaredNames?: Map<string, Array<{ file: string; pack?: string }>>;
}

export interface PluginLoadingOptions {
  checkSchemas?: boolean;
  /**
   * Import only the package's own plugins; read the others' names from their files without running
   * them, for `manus inspect`, which shows what a run would load before any of it runs.
   */
  importOnlyBuiltIns?: boolean;
}

export interface PluginFolder {
  path: string;
  location?: SourceLocation;
  /**
   * For the package's own plugins folder: of the built-in plugins unchanged since the build, load
   * only those the manifest says define one of these names. Their other names stay reserved, so a
   * plugin elsewhere still cannot take them. Any other file in the folder always loads: which
   * tools exist never depends on what a run needs.
   */
  neededBuiltIns?: ReadonlySet<string>;
  /** The pack whose plugins folder this is: its tools are known by `name@pack` too, and two packs may define one name. */
  pack?: string;
}

/** Where the kernel's own tools are said to come from in messages and listings. */
const kernelToolFile = 'the runtime';

/**
 * Loads every plugin file of the folders. A folder or file reached twice (listed again, or through
 * a symbolic link) loads once: the same file is not a conflict with itself.
 */
export async function loadPluginFolders(folders: PluginFolder[], options: PluginLoadingOptions = {}): Promise<LoadedPlugins> {
  const diagnostics: Diagnostic[] = [];
  const files: string[] = [];
  const packFiles = new Map<string, string[]>();
  const declaredNames = new Map<string, Array<{ file: string; pack?: string }>>();
  const declare = (name: string, place: { file: string; pack?: string }) => declaredNames.set(name, [...(declaredNames.get(name) ?? []), place]);
  builtInFolder ??= realpathSync(join(packageRoot, 'plugins'));
  const seen = new Set<string>();
  const reserved = new Map<string, string>();
  // Left unloaded on the manifest's word alone, without reading their files' times: if a name the
  // run needs turns up nowhere, these are checked against their sources after all.
  const skipped: Array<{ file: string; needed: ReadonlySet<string> }> = [];
  for (const folder of folders) {
    if (!existsSync(folder.path) || !statSync(folder.path).isDirectory()) {
      diagnostics.push({ severity: 'error', message: `plugin folder not found: ${displayPath(folder.path)}`, location: folder.location ?? { file: folder.path } });
      continue;
    }
    const realFolder = realPath(folder.path);
    if (seen.has(realFolder)) continue;
    seen.add(realFolder);
    if (options.importOnlyBuiltIns && realFolder !== builtInFolder) {
      for (const plugin of scanPluginFolder(folder.path)) {
        for (const name of plugin.names) {
          declare(name, { file: plugin.entry, pack: folder.pack });
          if (folder.pack !== undefined) declare(qualifiedName(name, folder.pack), { file: plugin.entry, pack: folder.pack });
        }
      }
      continue;
    }
    for (const file of pluginFilesIn(folder.path)) {
      const realFile = realPath(file);
      if (seen.has(realFile)) continue;
      seen.add(realFile);
      if (folder.pack !== undefined) {
        packFiles.set(folder.pack, [...(packFiles.get(folder.pack) ?? []), file]);
        continue;
      }
      const listed = folder.neededBuiltIns ? builtInEntry(file) : undefined;
      if (!listed || listed.names.some((name) => folder.neededBuiltIns!.has(name))) files.push(file);
      else {
        for (const name of listed.names) reserved.set(name, file);
        skipped.push({ file, needed: folder.neededBuiltIns! });
      }
    }
  }
  const loaded = await loadPluginFiles(files, diagnostics, options);
  // The kernel's own tools (terminate) are always there: needing one is no reason to look at skipped files' sources.
  const defines = (name: string) => loaded.tools.has(name) || loaded.contextProviders.has(name) || loaded.stepKinds.has(name.replace(/^step-kind:/, '')) || kernelTools.some((tool) => tool.name === name);
  const missing = (needed: ReadonlySet<string>) => [...needed].some((name) => !defines(name) && !reserved.has(name));
  const changed = skipped.filter(({ file, needed }) => missing(needed) && !unchangedBuiltIn(file));
  const loadSkipped = async (skippedFiles: string[]) => {
    for (const file of skippedFiles) for (const [name, owner] of reserved) if (owner === file) reserved.delete(name);
    const reloaded = await loadPluginFiles(skippedFiles, diagnostics, options);
    for (const [name, tool] of reloaded.tools) loaded.tools.set(name, tool);
    for (const [name, provider] of reloaded.contextProviders) loaded.contextProviders.set(name, provider);
    for (const [kind, stepKind] of reloaded.stepKinds) loaded.stepKinds.set(kind, stepKind);
  };
  if (changed.length > 0) await loadSkipped(changed.map(({ file }) => file));
  // The tools a loaded tool calls load with it, though no agent lists them.
  const calledFiles = () => {
    const files = new Set<string>();
    for (const { tool } of loaded.tools.values()) {
      for (const name of tool.calls ?? []) {
        const owner = defines(name) ? undefined : reserved.get(name);
        if (owner) files.add(owner);
      }
    }
    return [...files];
  };
  for (let files = calledFiles(); files.length > 0; files = calledFiles()) await loadSkipped(files);
  const ambiguousTools = new Map<string, LoadedTool[]>();
  for (const [pack, packPluginFiles] of packFiles) {
    addPackPlugins(loaded, pack, await loadPluginFiles(packPluginFiles, diagnostics, options), ambiguousTools, diagnostics);
  }
  for (const tool of kernelTools) {
    const clash = loaded.tools.get(tool.name);
    if (clash) diagnostics.push({ severity: 'error', message: `the tool '${tool.name}' is the runtime's own; a plugin cannot define it`, location: definitionLocation(clash.file, tool.name) });
    loaded.tools.set(tool.name, { tool, file: kernelToolFile });
  }
  const defined = [
    ...[...loaded.tools].map(([name, { file }]) => ({ kind: 'tool', name, file })),
    ...[...loaded.contextProviders].map(([name, { file }]) => ({ kind: 'context provider', name, file })),
    ...[...loaded.stepKinds].map(([kind, { file }]) => ({ kind: 'step kind', name: stepKindExportName(kind), file })),
  ];
  for (const { kind, name, file } of defined) {
    const owner = reserved.get(name);
    if (owner && owner !== file) diagnostics.push(conflict(kind, name, owner, file));
  }
  return { ...loaded, unloadedNames: [...reserved.keys()], ambiguousTools, declaredNames };
}

/**
 * A pack's plugins join the run's: each tool under `name@pack`, and under its own name unless
 * another pack has it too (then the name is ambiguous, and an error only where an agent uses it
 * unqualified). A pack taking a name of the run's other plugins is a conflict, as between any two files.
 */
function addPackPlugins(loaded: LoadedPlugins, pack: string, packLoaded: LoadedPlugins, ambiguousTools: Map<string, LoadedTool[]>, diagnostics: Diagnostic[]): void {
  for (const [name, entry] of packLoaded.tools) {
    const tool = { ...entry, pack };
    loaded.tools.set(qualifiedName(name, pack), tool);
    const existing = loaded.tools.get(name);
    if (!existing) loaded.tools.set(name, tool);
    else if (existing.pack !== undefined) ambiguousTools.set(name, [...(ambiguousTools.get(name) ?? [existing]), tool]);
    else diagnostics.push(conflict('tool', name, existing.file, tool.file));
  }
  for (const [name, entry] of packLoaded.contextProviders) {
    const existing = loaded.contextProviders.get(name);
    if (existing) diagnostics.push(conflict('context provider', name, existing.file, entry.file));
    else loaded.contextProviders.set(name, entry);
  }
  for (const [kind, entry] of packLoaded.stepKinds) {
    const existing = loaded.stepKinds.get(kind);
    if (existing) diagnostics.push(conflict('step kind', kind, existing.file, entry.file, 'kind'));
    else loaded.stepKinds.set(kind, entry);
  }
}

/** Loads plugin files; a file may export one tool, context provider or step kind, or a list of them. */
export async function loadPluginFiles(files: string[], diagnostics: Diagnostic[] = [], options: { checkSchemas?: boolean } = {}): Promise<LoadedPlugins> {
  const tools = new Map<string, LoadedTool>();
  const contextProviders = new Map<string, LoadedContextProvider>();
  const stepKinds = new Map<string, LoadedStepKind>();
  const modules = await Promise.all(files.map(async (file) => ({ file, loaded: await importPlugin(file) })));
  for (const { file, loaded } of modules) {
    if ('error' in loaded) {
      diagnostics.push({ severity: 'error', message: loaded.error, location: loaded.location });
      continue;
    }
    for (const candidate of loaded.tools) {
      if (isContextProvider(candidate)) {
        const existingProvider = contextProviders.get(candidate.name);
        if (existingProvider) {
          diagnostics.push(conflict('context provider', candidate.name, existingProvider.file, file));
        } else {
          contextProviders.set(candidate.name, { provider: candidate, file });
        }
        continue;
      }
      if (isStepKindDefinition(candidate)) {
        const existingKind = stepKinds.get(candidate.kind);
        if (existingKind) diagnostics.push(conflict('step kind', candidate.kind, existingKind.file, file, 'kind'));
        else if (builtInStepKinds.has(candidate.kind)) {
          diagnostics.push({ severity: 'error', message: `the step kind '${candidate.kind}' is the runtime's own; a plugin cannot define it`, location: definitionLocation(file, candidate.kind, 'kind') });
        } else stepKinds.set(candidate.kind, { stepKind: candidate, file });
        continue;
      }
      const problems = describeToolProblems(candidate);
      if (problems.length > 0) {
        diagnostics.push({ severity: 'error', message: `plugin does not export a valid tool: ${problems.join('; ')}`, location: { file } });
        continue;
      }
      const tool = candidate as AnyToolDefinition;
      const existing = tools.get(tool.name);
      if (existing) {
        diagnostics.push(conflict('tool', tool.name, existing.file, file));
        continue;
      }
      const schemaProblem = options.checkSchemas ? checkToolSchema(tool) : undefined;
      if (schemaProblem) {
        diagnostics.push({ severity: 'error', message: schemaProblem, location: { file } });
        continue;
      }
      tools.set(tool.name, { tool, file });
    }
  }
  return { tools, contextProviders, stepKinds, diagnostics };
}

/** The kinds the flow engine runs itself. */
const builtInStepKinds = new Set(['agent', 'parallel']);

/** Two files defining one name: an error at the second definition, naming where both are. */
function conflict(kind: string, name: string, firstFile: string, secondFile: string, key = 'name'): Diagnostic {
  const first = definitionLocation(firstFile, name, key);
  const second = definitionLocation(secondFile, name, key);
  return {
    severity: 'error',
    message: `two plugins define the ${kind} '${name}': ${describeLocation(first)} and ${describeLocation(second)}`,
    location: second,
  };
}

/**
 * Where a plugin defines a name, found in its text as `name: 'the-name'`: in the file itself or, for
 * a family folder's index, in the folder's other files. A name built at run time has no such text,
 * and the file alone is given.
 */
export function definitionLocation(file: string, name: string, key = 'name'): SourceLocation {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const definition = new RegExp(`\\b${key}\\s*:\\s*(['"\`])${escaped}\\1`);
  const candidates = indexFileNames.includes(basename(file)) ? [file, ...siblingFiles(file)] : [file];
  for (const candidate of candidates) {
    let text: string;
    try {
      text = readFileSync(candidate, 'utf8');
    } catch {
      continue;
    }
    const match = definition.exec(text);
    if (!match) continue;
    const before = text.slice(0, match.index);
    return { file: candidate, line: before.split('\n').length, column: match.index - before.lastIndexOf('\n') };
  }
  return { file };
}

function siblingFiles(file: string): string[] {
  const folder = dirname(file);
  return readdirSync(folder).filter(isPluginFile).sort().map((name) => join(folder, name)).filter((path) => path !== file);
}

function describeLocation(location: SourceLocation): string {
  const position = location.line === undefined ? '' : `:${location.line}:${location.column}`;
  return `${displayPath(location.file)}${position}`;
}

function isContextProvider(candidate: unknown): candidate is ContextProviderDefinition {
  const value = candidate as Partial<ContextProviderDefinition> | undefined;
  return !!value && typeof value === 'object' && typeof value.render === 'function' && !('execute' in value) && typeof value.name === 'string';
}

async function importPlugin(file: string): Promise<{ tools: unknown[] } | { error: string; location: SourceLocation }> {
  let exported: unknown;
  try {
    exported = await loadPluginModule(file);
  } catch (error) {
    return describeLoadFailure(file, error);
  }
  if (!exported || typeof exported !== 'object' || !('default' in exported)) {
    return { error: 'the plugin has no default export: export default a tool made with defineTool, or a list of tools', location: { file } };
  }
  const value = (exported as { default: unknown }).default;
  return { tools: Array.isArray(value) ? value : [value] };
}

/**
 * Loader messages can span lines (a code frame, a require stack); keep the first. The compiler's
 * errors carry their position; jiti's parse errors end with `file:line:column`, the column counted
 * from 0. Stack positions are not used: they point into the compiled code, not the source.
 */
function describeLoadFailure(file: string, error: unknown): { error: string; location: SourceLocation } {
  if (error instanceof TranspileError) return { error: `plugin failed to load: ${error.message}`, location: error.location };
  const message = error instanceof Error ? error.message : String(error);
  const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const position = new RegExp(`${escaped}:(\\d+):(\\d+)`).exec(message);
  const location: SourceLocation = position ? { file, line: Number(position[1]), column: Number(position[2]) + 1 } : { file };
  return { error: `plugin failed to load: ${message.split('\n')[0].trim()}`, location };
}

export async function loadPluginModule(file: string): Promise<unknown> {
  const builtIn = unchangedBuiltIn(file);
  if (builtIn?.load) return builtIn.load();
  if (file.endsWith('.js') || file.endsWith('.mjs')) return loadModuleFile(file);
  const loader = await sharedTypeScriptLoader();
  if (loader) {
    try {
      return loader.load(file);
    } catch (error) {
      if (!needsModuleLoader(error)) throw error;
    }
  }
  const jiti = await sharedJiti();
  return jiti.import(file);
}

let builtInFolder: string | undefined;

/**
 * The manifest entry of a built-in plugin, unless it changed since the build (then what it defines
 * is known only by loading its source) or is not one of the package's own.
 */
function unchangedBuiltIn(file: string): BuiltInPlugin | undefined {
  const entry = builtInEntry(file);
  if (!entry) return undefined;
  const folder = dirname(file);
  return newestChange(indexFileNames.includes(basename(file)) && folder !== builtInFolder ? folder : file) <= builtInManifest().builtAtMs ? entry : undefined;
}

/** The manifest entry of one of the package's own plugins, whether or not it changed since the build. */
function builtInEntry(file: string): BuiltInPlugin | undefined {
  const manifest = builtInManifest();
  if (manifest.plugins.size === 0) return undefined;
  builtInFolder ??= realpathSync(join(packageRoot, 'plugins'));
  const folder = realPath(dirname(file));
  const family = indexFileNames.includes(basename(file)) && realPath(dirname(folder)) === builtInFolder;
  if (!family && folder !== builtInFolder) return undefined;
  return manifest.plugins.get(family ? basename(folder) : basename(file, extname(file)));
}

/** When a plugin file, or any file of a plugin folder, last changed. */
function newestChange(path: string): number {
  const information = statSync(path);
  if (!information.isDirectory()) return information.mtimeMs;
  let newest = information.mtimeMs;
  for (const name of readdirSync(path, { recursive: true })) newest = Math.max(newest, statSync(join(path, String(name))).mtimeMs);
  return newest;
}

/** A dangling link has no real path; loading it then reports the problem with the file. */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

let typeScriptLoader: Promise<TypeScriptModuleLoader | undefined> | undefined;

/**
 * TypeScript plugins are compiled by esbuild, through the user's compiled-plugin cache when its
 * folder passes its checks (compiled-code-cache.ts). Without esbuild (no prebuilt executable for
 * this platform), jiti loads them.
 */
function sharedTypeScriptLoader(): Promise<TypeScriptModuleLoader | undefined> {
  typeScriptLoader ??= publicApi().then((runtime) => {
    const transpiler = esbuildTranspiler();
    if (!transpiler) return undefined;
    const folder = compiledPluginsFolder();
    const opened = folder === undefined ? undefined : openCompiledCodeCache(folder);
    const cache = opened && 'cache' in opened ? opened.cache : undefined;
    return typeScriptModuleLoader({ transpiler, cache, virtualModules: { 'manus-runtime': runtime } });
  });
  return typeScriptLoader;
}

let jitiInstance: Promise<{ import(id: string): Promise<unknown> }> | undefined;

/**
 * For what CommonJS cannot express (top-level await), and where esbuild is missing. A TypeScript
 * plugin's `import ... from 'manus-runtime'` gets this process's own runtime module, not a second
 * copy read from disk: its errors and helpers are the kernel's own, and nothing is loaded. jiti's
 * own cache on disk is off: by default it is a folder shared by every user (`/tmp/jiti`), from which
 * it would run whatever another user left there.
 */
function sharedJiti() {
  jitiInstance ??= Promise.all([import('jiti'), publicApi()]).then(([{ createJiti }, runtime]) =>
    createJiti(import.meta.url, {
      interopDefault: true,
      fsCache: false,
      virtualModules: { 'manus-runtime': runtime },
    }),
  );
  return jitiInstance;
}

export function displayPath(file: string): string {
  const fromCwd = relative(process.cwd(), file);
  return fromCwd.startsWith('..') ? file : fromCwd;
}
