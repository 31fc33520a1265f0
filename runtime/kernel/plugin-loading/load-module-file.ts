/**
 * Loads a plugin file that is not part of the runtime's bundle. `require` comes first: since Node
 * 20.19 it loads ES modules too, without starting Node's ESM loader (several milliseconds of
 * every start); `import()` takes what it cannot load, a module with top-level await or any ES
 * module on an older Node. Either way the result has the shape of a module namespace.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { types } from 'node:util';

const requireModule = createRequire(import.meta.url);
const needsImport = new Set(['ERR_REQUIRE_ESM', 'ERR_REQUIRE_ASYNC_MODULE']);

export async function loadModuleFile(file: string): Promise<object> {
  try {
    const loaded: unknown = requireModule(file);
    return types.isModuleNamespaceObject(loaded) ? (loaded as object) : { default: loaded };
  } catch (error) {
    if (!needsImport.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
  }
  // The bundle is compiled with no import() of its own (cli/compile-cache.ts); the build gives
  // this module a file of its own, which Node compiles with it.
  return (await import(pathToFileURL(file).href)) as object;
}
