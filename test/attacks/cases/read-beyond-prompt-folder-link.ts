import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { defineAttack } from '../attack-case.js';
import { secretLeaked } from '../leak-evidence.js';

export default defineAttack({
  goal: 'read-beyond',
  route: 'a prompt file under a folder link in the middle of its path',
  description: 'The recipe\'s folder prompts/ is a symbolic link to the user\'s folder; prompts/secret.txt is then the user\'s file.',
  project: () => ({
    'recipe.yaml': 'version: 1\nname: attack\nprompt: {file: prompts/secret.txt}\nagent:\n  tools: [terminate]\n',
  }),
  setup: (world) => {
    symlinkSync(world.outside, join(world.project, 'prompts'));
  },
  turns: () => [{ toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] }],
  detect: (world, run) => secretLeaked(world, run),
});
