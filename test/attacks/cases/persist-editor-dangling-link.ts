import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { defineAttack } from '../attack-case.js';
import { editorCall, finish, outsideChanges } from '../swapped-folder.js';

export default defineAttack({
  goal: 'persist',
  needs: ['edit files', 'draw a chart'],
  route: 'the editor creates a file through a dangling link',
  description: 'The project holds a link to a file that does not exist yet outside it; creating the link’s name would create that file, as root.',
  project: () => ({ 'recipe.yaml': 'version: 1\nname: attack\nprompt: Write the plan.\nagent: manus\n' }),
  setup: (world) => {
    symlinkSync(join(world.outside, 'planted.txt'), join(world.project, 'plan.txt'));
    symlinkSync(world.outside, join(world.project, 'drafts'));
  },
  turns: () => [
    {
      toolCalls: [
        editorCall({ command: 'create', path: 'plan.txt', file_text: 'planted\n' }),
        editorCall({ command: 'create', path: 'drafts/planted-too.txt', file_text: 'planted\n' }),
        { name: 'chart_visualization', arguments: { specification: { mark: 'bar' }, data: [{ a: 1 }], output: 'drafts/chart', formats: ['svg'] } },
      ],
    },
    finish,
  ],
  detect: (world) => outsideChanges(world),
});
