/**
 * Runs a TypeScript plugin as a CommonJS module compiled by esbuild, with no build step: the text
 * is read once, compiled (or taken from the user's compiled-plugin cache, by the hash of that very
 * text) and the compiled code run in a module of its own. Its `import`s of 'manus-runtime' get the
 * runtime's own module; of its own `.ts` files (named `./x.js`, `./x.ts` or `./x`), the same
 * treatment; of anything else, Node's `require` from the plugin's folder. The whole of it is part
 * of the runtime's bundle and its code cache, so a plugin compiled before costs about what a
 * JavaScript one does.
 *
 * What CommonJS cannot express fails with `needsModuleLoader`, and the caller loads the plugin
 * another way: top-level await in the plugin's files, or a package it imports that has one.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import { dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { TranspileError, importMetaUrlName, type Transpiler } from '../../services/plugin-compilation/typescript-transpiler.js';
import { compiledCodeKey, type CompiledCodeCache } from '../../services/plugin-compilation/compiled-code-cache.js';

export interface TypeScriptModuleLoader {
  /** The module's exports, as a namespace: `default` is the default export. */
  load(file: string): object;
}

export interface TypeScriptLoaderOptions {
  transpiler: Transpiler;
  /** None when the user's cache folder was refused or cannot be made: every load compiles. */
  cache?: CompiledCodeCache;
  /** Modules given by name rather than found on disk ('manus-runtime'). */
  virtualModules: Readonly<Record<string, object>>;
}

const typeScriptExtensions = ['.ts', '.mts', '.cts'];
const javaScriptTwins: Record<string, string[]> = { '.js': ['.ts'], '.mjs': ['.mts'], '.cjs': ['.cts'] };

/**
 * Whether an error means the plugin must be loaded by a loader that has top-level await (or, on a
 * Node before 20.19, that can import an ES module package at all).
 */
export function needsModuleLoader(error: unknown): boolean {
  return (error instanceof TranspileError && error.needsModuleLoader) || requireCannotLoad.has((error as NodeJS.ErrnoException | undefined)?.code ?? '');
}

const requireCannotLoad = new Set(['ERR_REQUIRE_ASYNC_MODULE', 'ERR_REQUIRE_ESM']);

export function typeScriptModuleLoader(options: TypeScriptLoaderOptions): TypeScriptModuleLoader {
  const modules = new Map<string, Module>();

  const compile = (source: string, file: string): string => {
    const key = compiledCodeKey(options.transpiler.identity, source);
    const cached = options.cache?.read(key);
    if (cached !== undefined) return cached;
    const code = options.transpiler.transpile(source, file);
    options.cache?.write(key, code);
    return code;
  };

  const requireFrom = (parent: string, nativeRequire: NodeJS.Require, specifier: string): unknown => {
    if (Object.hasOwn(options.virtualModules, specifier)) return options.virtualModules[specifier];
    if (specifier.startsWith('.') || isAbsolute(specifier)) {
      const own = typeScriptFileNamed(resolve(dirname(parent), specifier));
      if (own) return loadFile(own);
    }
    return nativeRequire(specifier);
  };

  const loadFile = (file: string): unknown => {
    const known = modules.get(file);
    if (known) return known.exports;
    const code = compile(readFileSync(file, 'utf8'), file);
    const module = new Module(file);
    const nativeRequire = createRequire(file);
    module.filename = file;
    module.paths = nativeRequire.resolve.paths('a-package') ?? [];
    module.require = ((specifier: string) => requireFrom(file, nativeRequire, specifier)) as NodeJS.Require;
    modules.set(file, module);
    try {
      // `_compile` wraps the code as Node does, with `import()` working as in any CommonJS module.
      (module as unknown as { _compile(code: string, file: string): void })._compile(withPrologue(code), file);
    } catch (error) {
      modules.delete(file);
      throw error;
    }
    module.loaded = true;
    return module.exports;
  };

  return {
    load(file) {
      const exported = loadFile(file) as { __esModule?: boolean } | undefined;
      return exported?.__esModule ? exported : { default: exported };
    },
  };
}

/**
 * Strict, as an ES module is, and with `import.meta.url` declared; on the code's first line, so
 * line numbers stay those of the compiled code. A `#!` line is kept as a comment.
 */
function withPrologue(code: string): string {
  const body = code.startsWith('#!') ? `//${code}` : code;
  const importMeta = body.includes(importMetaUrlName) ? `var ${importMetaUrlName} = require("node:url").pathToFileURL(__filename).href;` : '';
  return `"use strict";${importMeta}${body}`;
}

/** The plugin's own TypeScript file a relative import names, or undefined for anything else. */
function typeScriptFileNamed(path: string): string | undefined {
  const extension = extname(path);
  if (typeScriptExtensions.includes(extension)) return isFile(path) ? path : undefined;
  if (isFile(path)) return undefined;
  const twins = javaScriptTwins[extension];
  if (twins) return twins.map((twin) => path.slice(0, -extension.length) + twin).find(isFile);
  const candidates = [...typeScriptExtensions.map((each) => path + each), ...typeScriptExtensions.map((each) => join(path, `index${each}`))];
  return candidates.find(isFile);
}

function isFile(path: string): boolean {
  return existsSync(path) && statSync(path).isFile();
}
