import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineAttack } from '../attack-case.js';
import { finish, racingProject, racingRequires, secretReachedModel, startSwapping } from '../swapped-folder.js';

export default defineAttack({
  goal: 'read-beyond',
  needs: ['edit files'],
  route: 'python_execute’s list of changed files through a folder swapped for a link',
  description:
    'A background process of the agent swaps sub/d with a link to a root-only folder; python_execute lists the ' +
    'workspace before and after each run to report changed files, and a listing that follows the link reports ' +
    'the names of the files outside (one of them carries the secret).',
  project: racingProject,
  requires: racingRequires,
  setup: (world) => {
    writeFileSync(join(world.outside, `${world.secret}.txt`), 'named after the secret\n', { mode: 0o600 });
  },
  turns: (world) => [
    startSwapping(world),
    { toolCalls: Array.from({ length: 8 }, () => ({ name: 'python_execute', arguments: { code: 'import time; time.sleep(0.2)' } })) },
    finish,
  ],
  timeoutMs: 60_000,
  detect: (world, run) => secretReachedModel(world, run.modelRequestsText()),
});
