import { defineAttack } from '../attack-case.js';
import { finish, racingProject, racingRequires, racingTurn, secretReachedModel, startSwapping } from '../swapped-folder.js';

export default defineAttack({
  goal: 'read-beyond',
  needs: ['edit files'],
  route: 'file_search through a folder swapped for a link in a loop',
  description:
    'A background process of the agent swaps sub/d with a link to a root-only folder in a tight loop; parallel ' +
    'searches of sub/d and sub for the secret’s text hope to read the folder outside.',
  project: racingProject,
  requires: racingRequires,
  turns: (world) => [
    startSwapping(world),
    racingTurn([
      ...Array.from({ length: 40 }, () => ({ name: 'file_search', arguments: { pattern: 'outside-secret', path: 'sub/d' } })),
      ...Array.from({ length: 40 }, () => ({ name: 'file_search', arguments: { pattern: 'outside-secret', path: 'sub' } })),
    ]),
    finish,
  ],
  timeoutMs: 60_000,
  detect: (world, run) => secretReachedModel(world, run.modelRequestsText()),
});
