#!/usr/bin/env node
/**
 * The `manus` executable: a small launcher that loads the runtime's bundle through V8's code cache
 * and hands it the command line. Start-up is mostly compiling code; with the cache, a start after
 * the first skips most of it.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { cacheFolder } from '../runtime/services/cache-folder.js';
import { requireWithCodeCache } from './compile-cache.js';

/** A hash of the bundle's content, filled in by the build. */
declare const MANUS_BUNDLE_HASH: string;

interface RuntimeBundle {
  runCli(argv: readonly string[]): Promise<never>;
}

/**
 * A command that makes one run spends most of it waiting on the model and its tools. V8's young
 * generation grows from 1 to 8 MB at the first busy moments, which costs the run's peak memory
 * and bought no CPU time back on a 300-step run: it stays at its first size. TurboFan optimises a
 * function only once it has run 16 times as much bytecode as by default: the loop's few warm
 * functions no longer fill its zones (4 MB of peak memory), while the work that really is hot
 * (a 1.3 MB page turned into markdown) still gets optimised and takes within 10% as long. Turning
 * TurboFan off instead made that work take half again as long. Set before the bundle compiles: V8
 * keys its code cache to the flags, and each command keeps a cache of its own.
 *
 * V8 keys Node's own code cache to the flags too, and would compile every Node module loaded
 * after the change from source (30 ms of CPU before the first request). So the Node modules that
 * every run loads before its first request are loaded first; one missing from the list is only
 * compiled more slowly.
 */
const oneRunCommands = new Set(['run', 'resume', 'replay']);
if (oneRunCommands.has(process.argv[2] ?? '')) {
  loadNodeModulesOfARun();
  setFlagsFromString('--semi-space-growth-factor=1 --interrupt-budget=1048576');
}

const bundle = fileURLToPath(new URL('./manus.cjs', import.meta.url));
const runtime = requireWithCodeCache(bundle, codeCacheFile()) as RuntimeBundle;
// runCli handles every error itself and ends the process.
void runtime.runCli(process.argv);

/**
 * One cache per build of the bundle, Node version and command. V8 checks its own version and the
 * source's length but not its content, so the name carries the bundle's hash, and its size and
 * time in case the file was changed in place; each command keeps the code it runs. Without a
 * home folder to put it in, there is no cache.
 */
function codeCacheFile(): string | undefined {
  const folder = cacheFolder();
  if (folder === undefined) return undefined;
  const { size, mtimeMs } = statSync(bundle);
  const build = `${MANUS_BUNDLE_HASH}.${size.toString(36)}${Math.trunc(mtimeMs).toString(36)}`;
  const command = /^[a-z]+$/.test(process.argv[2] ?? '') ? process.argv[2] : 'other';
  return join(folder, 'code-cache', `${build}-node${process.versions.node}-${process.arch}-${command}.bin`);
}

function loadNodeModulesOfARun(): void {
  for (const name of ['node:http', 'node:fs/promises', 'node:crypto', 'node:readline/promises', 'node:tty', 'node:async_hooks', 'node:stream', 'node:perf_hooks']) require(name);
  // Node's fetch, whose classes the model SDK uses, loads when they are first touched.
  void [Headers, Response];
}
