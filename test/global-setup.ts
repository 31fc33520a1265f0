import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** CLI tests run the built command; refuse to run them against a missing build. */
export default function checkBuild(): void {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const entry = join(root, 'dist', 'bundle', 'main.js');
  if (!existsSync(entry) || statSync(entry).size === 0) {
    throw new Error('dist/bundle/main.js is missing: run "npm run build" (npm test does this first)');
  }
}
