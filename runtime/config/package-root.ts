import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder holding this package's package.json, whether running from source or from dist/. */
export const packageRoot: string = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

function findPackageRoot(start: string): string {
  let folder = start;
  while (!existsSync(join(folder, 'package.json')) || !existsSync(join(folder, 'schemas'))) {
    const parent = dirname(folder);
    if (parent === folder) return start;
    folder = parent;
  }
  return folder;
}
