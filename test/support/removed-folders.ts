import { rmSync } from 'node:fs';
import { afterEach } from 'vitest';
import { makeFixture } from './run-cli.js';

/**
 * Folders a test file makes, removed after each of its tests: `fixture` makes one from files,
 * `remove` takes any other. Call it once at the top of the file.
 */
export function removedAfterEach(): { fixture(files: Record<string, string>): string; remove(...folders: string[]): void } {
  const folders: string[] = [];
  afterEach(() => {
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });
  return {
    fixture(files) {
      const folder = makeFixture(files);
      folders.push(folder);
      return folder;
    },
    remove(...more) {
      folders.push(...more);
    },
  };
}
