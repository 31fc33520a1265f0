/**
 * The Python the data-analysis tests give python_execute (as MANUS_PYTHON): the one MANUS_PYTHON
 * names, else the first of `python3` on PATH and Debian's /usr/bin/python3 that imports the data
 * libraries. Undefined, with the reason, when none does: those tests are then skipped.
 */
import { spawnSync } from 'node:child_process';

const libraries = ['pandas', 'numpy', 'matplotlib', 'openpyxl'];

export function findDataPython(): { python?: string; reason: string } {
  const candidates = process.env.MANUS_PYTHON ? [process.env.MANUS_PYTHON] : ['python3', '/usr/bin/python3'];
  const problems: string[] = [];
  for (const python of candidates) {
    const result = spawnSync(python, ['-c', `import ${libraries.join(', ')}`], { encoding: 'utf8', timeout: 30_000 });
    if (result.status === 0) return { python, reason: `${python} imports ${libraries.join(', ')}` };
    problems.push(`${python}: ${result.error?.message ?? result.stderr.trim().split('\n').at(-1)}`);
  }
  return { reason: `no Python here imports ${libraries.join(', ')} (${problems.join('; ')}); apt-get install python3-pandas python3-matplotlib python3-openpyxl` };
}
