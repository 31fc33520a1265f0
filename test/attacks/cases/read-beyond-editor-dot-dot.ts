import { basename } from 'node:path';
import { defineAttack } from '../attack-case.js';
import { editorCall, finish, secretReachedModel } from '../swapped-folder.js';

export default defineAttack({
  goal: 'read-beyond',
  needs: ['edit files'],
  route: '".." components out of the workspace',
  description: 'The model climbs out of the workspace with ".." to read a root-only file beside it.',
  project: () => ({ 'recipe.yaml': 'version: 1\nname: attack\nprompt: Summarise the notes.\nagent: manus\n' }),
  turns: (world) => [
    {
      toolCalls: [
        editorCall({ command: 'view', path: `../${basename(world.outside)}/secret.txt` }),
        editorCall({ command: 'view', path: `sub/../../${basename(world.outside)}/secret.txt` }),
        { name: 'file_search', arguments: { pattern: 'secret', path: `../${basename(world.outside)}` } },
        { name: 'list_files', arguments: { path: '..' } },
      ],
    },
    finish,
  ],
  detect: (world, run) => secretReachedModel(world, run.modelRequestsText()),
});
