/**
 * The docker sandbox's default image. Its tag names the Debian suite and a hash of the package
 * list in sandbox-image-packages.txt, the one list that .ci/setup-docker.sh also builds the image
 * from: a changed list asks for a new image instead of quietly using an old one without the
 * packages the agents import.
 */
import { createHash } from 'node:crypto';
import { sandboxImagePackagesText } from './sandbox-image-packages.js';

export const sandboxImageRepository = 'manus-sandbox';
export const sandboxImageSuite = 'bookworm';

/** The package names in the list's text: one a line; `#` starts a comment, blank lines and spaces are left out. */
export function parseSandboxImagePackages(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.replace(/#.*/, '').replace(/\s/g, ''))
    .filter((line) => line !== '');
}

/** `manus-sandbox:<suite>-<12 hex digits>`: the SHA-256 of the names, each followed by a newline. */
export function sandboxImageName(packages: readonly string[]): string {
  const hash = createHash('sha256').update(packages.map((name) => `${name}\n`).join('')).digest('hex').slice(0, 12);
  return `${sandboxImageRepository}:${sandboxImageSuite}-${hash}`;
}

export const sandboxImagePackages: readonly string[] = parseSandboxImagePackages(sandboxImagePackagesText);

export const defaultSandboxImage: string = sandboxImageName(sandboxImagePackages);
