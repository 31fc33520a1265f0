import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliEntry, makeFixture, repositoryRoot } from './run-cli.js';

/**
 * npm's settings for the tests: offline, with a registry on a closed loopback port, so an install
 * that would need the registry fails at once instead of reaching the internet, and a cache of the
 * tests' own, so nothing is read from or left in the user's.
 */
export function npmEnvironment(): Record<string, string> {
  return { npm_config_registry: 'http://127.0.0.1:9/', npm_config_offline: 'true', npm_config_update_notifier: 'false', npm_config_cache: npmCache() };
}

function npm(args: string[], cwd: string): string {
  return execFileSync('npm', [...args, '--offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...npmEnvironment() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

let cache: string | undefined;

function npmCache(): string {
  cache ??= mkdtempSync(join(tmpdir(), 'manus-test-npm-cache-'));
  return cache;
}

/** `npm pack` of a folder: the tarball's path, written in `destination`. */
export function packTarball(folder: string, destination: string): string {
  const name = npm(['pack', '--pack-destination', destination], folder).trim().split('\n').pop()!;
  return join(destination, name);
}

let runtime: string | undefined;

/**
 * The runtime's own tarball, packed once from the built checkout. Its scripts do not run: `prepare`
 * would build again, and the tests run against the build that is there.
 */
export function runtimeTarball(): string {
  if (runtime === undefined) {
    const destination = makeFixture({});
    runtime = join(destination, npm(['pack', '--ignore-scripts', '--pack-destination', destination], repositoryRoot).trim().split('\n').pop()!);
  }
  return runtime;
}

/**
 * A fresh project (`npm init -y`) with each of `installs` (tarballs or folders) installed by npm.
 * With `runtimeDependencies`, the project starts with the runtime's dependencies where an install
 * from the registry would have put them (see `addRuntimeDependencies`).
 */
export function scratchProject(installs: string[], options: { runtimeDependencies?: boolean } = {}): string {
  const project = makeFixture({});
  npm(['init', '-y'], project);
  if (options.runtimeDependencies) addRuntimeDependencies(project);
  if (installs.length > 0) npm(['install', ...installs], project);
  return project;
}

/** `npm install` of `installs` into a folder that has a package.json, offline, as a development dependency. */
export function installForDevelopment(folder: string, installs: string[]): void {
  npm(['install', '--save-dev', ...installs], folder);
}

/**
 * Puts the runtime's production dependencies, as this checkout has them installed, into `folder`'s
 * node_modules (hard links where the file system allows, copies elsewhere), with their commands in
 * node_modules/.bin. Installing the runtime's tarball there then finds every dependency it declares
 * already present, as it would after fetching them from the registry, and npm reaches no registry:
 * the tests have none. The packages come from package-lock.json, which `npm install` in the
 * checkout followed, so nothing is left out but what does not run on this machine.
 */
export function addRuntimeDependencies(folder: string): void {
  const added = new Set<string>();
  for (const path of runtimePackages().filter((path) => existsSync(join(repositoryRoot, path)))) {
    linkTree(join(repositoryRoot, path), join(folder, path));
    added.add(path.slice('node_modules/'.length));
  }
  const bin = join(repositoryRoot, 'node_modules', '.bin');
  mkdirSync(join(folder, 'node_modules', '.bin'), { recursive: true });
  for (const name of existsSync(bin) ? readdirSync(bin) : []) {
    const target = readlinkSync(join(bin, name));
    const owner = /^\.\.\/((?:@[^/]+\/)?[^/]+)\//.exec(target)?.[1];
    if (owner !== undefined && added.has(owner)) symlinkSync(target, join(folder, 'node_modules', '.bin', name));
  }
}

/** The runtime's production packages at the top of node_modules, from package-lock.json; a nested one comes with its parent. */
function runtimePackages(): string[] {
  const lock = JSON.parse(readFileSync(join(repositoryRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  return Object.entries(lock.packages).filter(([path, entry]) => !entry.dev && /^node_modules\/(@[^/]+\/)?[^/]+$/.test(path)).map(([path]) => path);
}

/**
 * Why `addRuntimeDependencies` cannot stand in for the registry here, or undefined when it can: a
 * package the runtime needs that is not installed in the checkout would have to be fetched.
 */
export function runtimeDependenciesMissing(): string | undefined {
  const lock = JSON.parse(readFileSync(join(repositoryRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { optional?: boolean }> };
  const missing = runtimePackages().filter((path) => !lock.packages[path].optional && !existsSync(join(repositoryRoot, path)));
  return missing.length === 0 ? undefined : `installing the runtime's tarball would need the registry for ${missing.join(', ')}, which npm install did not put in the checkout`;
}

/** A copy of a folder whose files are hard links to the original's where the file system allows it. */
function linkTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) linkTree(source, target);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else {
      try {
        linkSync(source, target);
      } catch {
        copyFileSync(source, target);
      }
    }
  }
}

/** A folder with a `manus` command that runs the built CLI, for PATH. */
export function manusOnPath(): string {
  const folder = makeFixture({});
  mkdirSync(join(folder, 'bin'));
  const command = join(folder, 'bin', 'manus');
  writeFileSync(command, `#!/bin/sh\nexec "${process.execPath}" "${cliEntry}" "$@"\n`);
  chmodSync(command, 0o755);
  return join(folder, 'bin');
}
