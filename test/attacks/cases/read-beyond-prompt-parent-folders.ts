import { relative } from 'node:path';
import { defineAttack } from '../attack-case.js';
import { secretLeaked } from '../leak-evidence.js';

export default defineAttack({
  goal: 'read-beyond',
  route: 'a task prompt file climbing out with ..',
  description: 'A recipe\'s prompt is {file: ../../...} leading from its folder to a file of the user\'s.',
  project: (world) => ({
    'recipe.yaml': `version: 1\nname: attack\nprompt: {file: ${relative(world.project, world.outside)}/secret.txt}\nagent:\n  tools: [terminate]\n`,
  }),
  turns: () => [{ toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] }],
  detect: (world, run) => secretLeaked(world, run),
});
