import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { defineAttack } from '../attack-case.js';
import { editorCall, finish, secretReachedModel } from '../swapped-folder.js';

export default defineAttack({
  goal: 'read-beyond',
  needs: ['edit files'],
  route: 'a link to an outside folder as a middle component',
  description: 'The project holds docs, a link to a root-only folder outside it; the file tools would read the files in it.',
  project: () => ({ 'recipe.yaml': 'version: 1\nname: attack\nprompt: Summarise the docs.\nagent: manus\n' }),
  setup: (world) => {
    symlinkSync(world.outside, join(world.project, 'docs'));
  },
  turns: () => [
    {
      toolCalls: [
        editorCall({ command: 'view', path: 'docs/secret.txt' }),
        editorCall({ command: 'view', path: 'docs' }),
        { name: 'file_search', arguments: { pattern: 'secret', path: 'docs' } },
        { name: 'list_files', arguments: { path: 'docs' } },
      ],
    },
    finish,
  ],
  detect: (world, run) => secretReachedModel(world, run.modelRequestsText()),
});
