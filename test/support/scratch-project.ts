import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliEntry, makeFixture } from './run-cli.js';

/**
 * npm as the tests use it: offline, and with a registry on a closed loopback port, so an install
 * that would need the registry fails at once instead of reaching the internet.
 */
function npm(args: string[], cwd: string): string {
  return execFileSync('npm', [...args, '--offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_registry: 'http://127.0.0.1:9/', npm_config_update_notifier: 'false', npm_config_cache: npmCache() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

let cache: string | undefined;

/** A cache of the tests' own: nothing is read from or left in the user's. */
function npmCache(): string {
  cache ??= mkdtempSync(join(tmpdir(), 'manus-test-npm-cache-'));
  return cache;
}

/** `npm pack` of a folder: the tarball's path, written in `destination`. */
export function packTarball(folder: string, destination: string): string {
  const name = npm(['pack', '--pack-destination', destination], folder).trim().split('\n').pop()!;
  return join(destination, name);
}

/** A fresh project (`npm init -y`) with each of `installs` (tarballs or folders) installed by npm. */
export function scratchProject(installs: string[]): string {
  const project = makeFixture({});
  npm(['init', '-y'], project);
  if (installs.length > 0) npm(['install', ...installs], project);
  return project;
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
