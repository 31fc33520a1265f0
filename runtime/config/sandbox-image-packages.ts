/**
 * The text of the sandbox image's package list. The bundle replaces this module with the text
 * itself (scripts/bundle.mjs), so the installed command reads no file for it at start-up.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from './package-root.js';

/** Relative to the package root; .ci/setup-docker.sh reads the same file. */
export const sandboxImagePackagesPath = 'runtime/config/sandbox-image-packages.txt';

export const sandboxImagePackagesText: string = readFileSync(join(packageRoot, sandboxImagePackagesPath), 'utf8');
