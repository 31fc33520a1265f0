/**
 * Loads a CommonJS file as Node's own loader would, but compiled with V8's code cache: the next
 * start deserializes the code this one compiled instead of parsing and compiling it again. Node
 * 20 has no compile cache of its own (Node 22 adds `module.enableCompileCache`), and only a
 * `vm.Script` takes cached data, which is why the runtime is bundled into one CommonJS file.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';

/** Node's CommonJS wrapper, on a line of its own so line numbers in stack traces stay right. */
const wrapperStart = '(function (exports, require, module, __filename, __dirname) {\n';
const wrapperEnd = '\n})';

/**
 * Requires `file` through the code cache in `cacheFile`. The module is put in `require.cache`, so
 * a later `require` or `import` of the same file gets this instance. A missing or refused cache is
 * written when the process exits, so that it also holds the functions this run compiled lazily.
 */
export function requireWithCodeCache(file: string, cacheFile: string): unknown {
  // The bundle is ASCII (esbuild escapes everything else), and latin1 decodes it fastest.
  const source = readFileSync(file, 'latin1');
  const cachedData = readIfPresent(cacheFile);
  const script = new Script(`${wrapperStart}${source}${wrapperEnd}`, { filename: file, lineOffset: -1, cachedData });
  const require = createRequire(file);
  const module = new Module(file);
  module.filename = file;
  module.paths = require.resolve.paths('manus-runtime') ?? [];
  require.cache[file] = module;
  const wrapper = script.runInThisContext() as (...parameters: unknown[]) => void;
  try {
    wrapper.call(module.exports, module.exports, require, module, file, dirname(file));
  } catch (error) {
    delete require.cache[file];
    throw error;
  }
  module.loaded = true;
  if (cachedData === undefined || script.cachedDataRejected) process.once('exit', () => writeCache(cacheFile, script));
  return module.exports;
}

/** The cache's bytes; a cache that is missing or cannot be read means a start without one. */
function readIfPresent(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/**
 * Written to a temporary name and renamed, so a concurrent start never reads half a cache. A cache
 * that cannot be written (a read-only home, a full disk) only costs the next start its speed.
 */
function writeCache(cacheFile: string, script: Script): void {
  const temporary = `${cacheFile}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(cacheFile), { recursive: true });
    writeFileSync(temporary, script.createCachedData());
    renameSync(temporary, cacheFile);
    removeStaleCaches(cacheFile);
  } catch {
    removeQuietly(temporary);
  }
}

function removeQuietly(file: string): void {
  try {
    rmSync(file, { force: true });
  } catch {
    // The folder itself is unusable (not a folder, not writable): there is nothing to clean.
  }
}

const staleAfterMs = 7 * 24 * 60 * 60 * 1000;

/**
 * Caches of other builds are never read again once that build is gone. A cache file is written
 * once, so its age tells when its build first ran: one of another build older than a week is taken
 * as left behind (a build still in use writes it again at its next start).
 */
function removeStaleCaches(current: string): void {
  const folder = dirname(current);
  const build = `${basename(current).split('-')[0]}-`;
  const now = Date.now();
  for (const name of readdirSync(folder)) {
    const file = join(folder, name);
    if (!name.startsWith(build) && now - statSync(file).mtimeMs > staleAfterMs) removeQuietly(file);
  }
}
