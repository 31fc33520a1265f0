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
 * Requires `file` through the code cache in `cacheFile` (none when undefined, or when its folder
 * could be written by others). The module is put in `require.cache`, so a later `require` or
 * `import` of the same file gets this instance. A missing or refused cache is written when the
 * process exits, so that it also holds the functions this run compiled lazily.
 */
export function requireWithCodeCache(file: string, cacheFile: string | undefined): unknown {
  const usableCache = cacheFile !== undefined && ownFolder(dirname(cacheFile)) ? cacheFile : undefined;
  // The bundle is ASCII (esbuild escapes everything else), and latin1 decodes it fastest.
  const source = readFileSync(file, 'latin1');
  const cachedData = usableCache === undefined ? undefined : readIfPresent(usableCache);
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
  if (usableCache !== undefined && (cachedData === undefined || script.cachedDataRejected)) {
    process.once('exit', () => writeCache(usableCache, script));
  }
  return module.exports;
}

/**
 * A cache is code this process will run, so only a folder that no one else can write to is used:
 * owned by this user and not writable by group or others. A folder not made yet will be, that way.
 */
function ownFolder(folder: string): boolean {
  let stats;
  try {
    stats = statSync(folder);
  } catch {
    return true;
  }
  if (typeof process.getuid !== 'function') return true;
  return stats.isDirectory() && stats.uid === process.getuid() && (stats.mode & 0o022) === 0;
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
    mkdirSync(dirname(cacheFile), { recursive: true, mode: 0o700 });
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
 * Caches of other builds, or of other Node versions, are never read again once those are gone. A
 * cache file is written once, so its age tells when its build first ran under that Node: one older
 * than a week is taken as left behind (one still in use is written again at its next start).
 */
function removeStaleCaches(current: string): void {
  const folder = dirname(current);
  const name = basename(current);
  const thisBuildAndNode = name.slice(0, name.lastIndexOf('-') + 1);
  const now = Date.now();
  for (const entry of readdirSync(folder)) {
    const file = join(folder, entry);
    if (!entry.startsWith(thisBuildAndNode) && now - statSync(file).mtimeMs > staleAfterMs) removeQuietly(file);
  }
}
