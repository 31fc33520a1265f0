import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url));
export const cliEntry = join(repositoryRoot, 'dist', 'bundle', 'main.js');

export interface CliResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON, when it is. */
  json?: any;
}

export interface CliOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
  stdin?: string;
  /** Another copy of the built command, for tests that need a package folder of their own. */
  entry?: string;
  /** The command line that starts `manus` instead of Node with the entry, such as npx's. */
  command?: string[];
}

/**
 * Runs the built `manus` command in a child process with a clean environment: no model variables
 * leak in from the machine, so each test states exactly what the run sees.
 */
export function runCli(args: string[], options: CliOptions): Promise<CliResult> {
  const entry = options.entry ?? cliEntry;
  if (options.command === undefined && !existsSync(entry)) throw new Error(`${entry} is missing: run "npm run build" first`);
  const environment: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? tmpdir(),
    NO_COLOR: '1',
    // Keep a stray local Ollama from being discovered by tests that expect no model.
    OLLAMA_HOST: '127.0.0.1:9',
    // Code caches of test builds stay out of the user's own cache folder.
    MANUS_CACHE_DIR: testCacheFolder(),
    // The user's own config.yaml (its trust grants) stays out too; tests that need one set their own.
    XDG_CONFIG_HOME: join(testCacheFolder(), 'no-user-config'),
  };
  // The docker sandbox needs to find the daemon the test run uses.
  for (const name of ['DOCKER_HOST', 'MANUS_DOCKER_HOST']) {
    if (process.env[name]) environment[name] = process.env[name]!;
  }
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete environment[key];
    else environment[key] = value;
  }
  return new Promise((resolve, reject) => {
    const [program, ...start] = options.command ?? [process.execPath, entry];
    const child = spawn(program, [...start, ...args], { cwd: options.cwd, env: environment, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ exitCode, signal, stdout, stderr, json });
    });
    // A command that exits before reading its input closes the pipe first; that is no failure of the test.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin ?? '');
  });
}

let cacheFolder: string | undefined;

function testCacheFolder(): string {
  cacheFolder ??= mkdtempSync(join(tmpdir(), 'manus-test-cache-'));
  return cacheFolder;
}

/** A temporary folder with the given files (paths relative to it; parent folders created). */
export function makeFixture(files: Record<string, string>): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-test-')));
  for (const [path, content] of Object.entries(files)) {
    const target = join(root, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
  return root;
}

/** The events of a run, parsed from its events.jsonl. */
export function readEvents(runDirectory: string): Array<Record<string, any>> {
  const text = readFileSync(join(runDirectory, 'events.jsonl'), 'utf8');
  return text.trim().split('\n').map((line) => JSON.parse(line));
}

/**
 * An XDG_CONFIG_HOME whose config.yaml allows private addresses, as a user whose pages are on
 * their own machine would write it: for runs that reach the tests' loopback servers with web tools.
 */
export function privateNetworkConfigHome(): string {
  const folder = join(testCacheFolder(), 'private-network-config');
  mkdirSync(join(folder, 'manus'), { recursive: true });
  writeFileSync(join(folder, 'manus', 'config.yaml'), 'version: 1\nnetwork:\n  allow_private: true\n');
  return folder;
}
