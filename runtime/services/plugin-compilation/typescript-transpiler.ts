/**
 * Turns a TypeScript plugin's text into CommonJS with esbuild's own executable, run once per file
 * that no cache holds. The executable is started directly rather than through esbuild's JavaScript
 * API: that API loads 100 KB of code and, for a synchronous call, starts a worker thread, about
 * 50 ms together on a first run, where the executable alone costs a process start (about 10 ms).
 * A plugin's own modules are required while it runs, so the call must be synchronous.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface Transpiler {
  /** Names the executable's version and the options: compiled code is reused only under the same one. */
  readonly identity: string;
  transpile(source: string, file: string): string;
}

/** The transpiler could not compile the text: a syntax error, or a construct CommonJS cannot express. */
export class TranspileError extends Error {
  constructor(
    message: string,
    readonly location: { file: string; line?: number; column?: number },
    /** Top-level await: CommonJS has no form for it, so the module must be loaded another way. */
    readonly needsModuleLoader: boolean,
  ) {
    super(message);
    this.name = 'TranspileError';
  }
}

/**
 * `import.meta` has no CommonJS form: its fields are named as the module wrapper's variables, and
 * the URL as one the loader declares (see `importMetaUrlName`).
 */
export const importMetaUrlName = '__manusImportMetaUrl';
const options = [
  '--loader=ts',
  '--format=cjs',
  '--platform=node',
  '--target=node20',
  `--define:import.meta.url=${importMetaUrlName}`,
  '--define:import.meta.dirname=__dirname',
  '--define:import.meta.filename=__filename',
  '--log-level=error',
  '--log-limit=1',
  '--color=false',
];

/** Looked for once per process; null when esbuild is not installed. */
let transpiler: Transpiler | null | undefined;

/** esbuild as installed beside the runtime, or undefined where its executable is missing (no prebuilt one for this platform). */
export function esbuildTranspiler(): Transpiler | undefined {
  if (transpiler !== undefined) return transpiler ?? undefined;
  transpiler = null;
  const found = esbuildExecutable();
  if (found) {
    const identity = `esbuild ${found.version} ${options.join(' ')}`;
    transpiler = { identity, transpile: (source, file) => runEsbuild(found.executable, source, file) };
  }
  return transpiler ?? undefined;
}

/**
 * Where esbuild's JavaScript API would find it: the package for this platform that npm installed as
 * one of esbuild's optional dependencies (`@esbuild/linux-x64/bin/esbuild`), whose version is pinned
 * to esbuild's own.
 */
function esbuildExecutable(): { executable: string; version: string } | undefined {
  try {
    const fromRuntime = createRequire(import.meta.url);
    const esbuildFolder = dirname(fromRuntime.resolve('esbuild/package.json'));
    const fromEsbuild = createRequire(join(esbuildFolder, 'package.json'));
    const platformPackage = dirname(fromEsbuild.resolve(`@esbuild/${process.platform}-${process.arch}/package.json`));
    const executable = join(platformPackage, process.platform === 'win32' ? 'esbuild.exe' : join('bin', 'esbuild'));
    const { version } = JSON.parse(readFileSync(join(platformPackage, 'package.json'), 'utf8')) as { version: string };
    return existsSync(executable) ? { executable, version } : undefined;
  } catch {
    return undefined;
  }
}

function runEsbuild(executable: string, source: string, file: string): string {
  const result = spawnSync(executable, [...options, `--sourcefile=${file}`], { input: source, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, windowsHide: true });
  if (result.error) throw result.error;
  if (result.status === 0) return result.stdout;
  throw describeFailure(result.stderr, file);
}

/**
 * esbuild's message, `✘ [ERROR] Unexpected ";"` then `    file:2:14:`, its column counted from 0
 * as in the transpiler's messages everywhere; the location is given counted from 1.
 */
function describeFailure(output: string, file: string): TranspileError {
  const message = /\[ERROR\] (.+)/.exec(output)?.[1]?.trim() ?? (output.trim().split('\n')[0] || 'the TypeScript compiler failed');
  const position = /^\s+(.+):(\d+):(\d+):$/m.exec(output);
  const location = position ? { file, line: Number(position[2]), column: Number(position[3]) + 1 } : { file };
  return new TranspileError(message, location, /top-level await/i.test(message));
}
