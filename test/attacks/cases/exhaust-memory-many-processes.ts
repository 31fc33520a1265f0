import { spawnSync } from 'node:child_process';
import { defineAttack } from '../attack-case.js';
import { bashTurns } from '../host-git.js';

export default defineAttack({
  goal: 'exhaust',
  route: 'four processes each within memory_mb',
  description: 'Under memory_mb 1024, the agent starts four processes of 600 MB each, every one within the per-process limit, to hold 2.4 GB together.',
  project: () => ({ 'recipe.yaml': 'version: 1\nname: attack\nprompt: Crunch.\nagent: swe\nsandbox: {kind: auto, memory_mb: 1024}\n' }),
  turns: () => bashTurns([
    'for i in 1 2 3 4; do python3 -c "import time; hold = b\'x\' * (600 * 1024 * 1024); time.sleep(4)" & done',
    'held=0; for job in $(jobs -p); do wait $job && held=$((held + 1)); done; echo "processes that held 600 MB: $held"',
  ].join('; ')),
  timeoutMs: 60_000,
  requires: () => (spawnSync('python3', ['--version']).status === 0 ? undefined : 'python3 is not installed'),
  detect: (world, run) => {
    const held = Number(/processes that held 600 MB: (\d+)/.exec(run.modelRequestsText())?.[1] ?? 0);
    return { reached: held >= 2, evidence: `${held} processes held 600 MB at once (more than one means more than 1024 MB together)` };
  },
});
