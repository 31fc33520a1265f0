/**
 * `npm run attacks`: runs the attack suite (test/attacks/) against the built command and prints the
 * table of goals by configuration. `--write-docs` writes the table into docs/security.md between
 * its markers, so the document cannot drift from what the suite shows. Exits as the suite did.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderTable, replaceTable, type AttackOutcome } from '../test/attacks/attack-table.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const writeDocs = process.argv.includes('--write-docs');
const folder = mkdtempSync(join(tmpdir(), 'manus-attack-results-'));
const resultsFile = join(folder, 'results.json');
try {
  const suite = spawnSync(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', 'test/attacks/attacks.test.ts'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ATTACK_RESULTS: resultsFile },
  });
  const { seconds, outcomes } = JSON.parse(readFileSync(resultsFile, 'utf8')) as { seconds: number; outcomes: AttackOutcome[] };
  const table = renderTable(outcomes, seconds);
  console.log(`\n${table}\n`);
  if (writeDocs) {
    const path = join(root, 'docs', 'security.md');
    writeFileSync(path, replaceTable(readFileSync(path, 'utf8'), table));
    console.log('docs/security.md: table written');
  }
  process.exitCode = suite.status ?? 1;
} finally {
  rmSync(folder, { recursive: true, force: true });
}
