/**
 * `npm run attacks`: runs the attack suite (test/attacks/) against the built command and prints the
 * table of goals by configuration. `--write-docs` writes the table into docs/security.md between
 * its markers, so the document cannot drift from what the suite shows. Exits as the suite did.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { attackConfigurations } from '../test/attacks/attack-configurations.js';
import { renderTable, replaceTable, type AttackOutcome } from '../test/attacks/attack-table.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const writeDocs = process.argv.includes('--write-docs');
const folder = mkdtempSync(join(tmpdir(), 'manus-attack-results-'));
const resultsFile = join(folder, 'results');
const started = Date.now();
try {
  const suite = spawnSync(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', 'test/attacks/attacks-', '--maxWorkers=3'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, ATTACK_RESULTS: resultsFile },
  });
  const outcomes: AttackOutcome[] = [];
  for (const configuration of attackConfigurations) {
    const file = `${resultsFile}.${configuration}.json`;
    if (existsSync(file)) outcomes.push(...(JSON.parse(readFileSync(file, 'utf8')) as { outcomes: AttackOutcome[] }).outcomes);
  }
  // The configurations run side by side: the suite took as long as the run of the command.
  const table = renderTable(outcomes, (Date.now() - started) / 1000);
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
