import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { defineAttack } from '../attack-case.js';
import { secretLeaked } from '../leak-evidence.js';

export default defineAttack({
  goal: 'read-beyond',
  route: 'a prompt file inside the recipe folder that is a link to a file outside',
  description: 'The recipe\'s prompts/system.md is a symbolic link to a file of the user\'s; the path itself looks inside.',
  project: () => ({
    'recipe.yaml': 'version: 1\nname: attack\nprompt: Say hello.\nagent:\n  system_prompt: {file: prompts/system.md}\n  tools: [terminate]\n',
  }),
  setup: (world) => {
    mkdirSync(join(world.project, 'prompts'));
    symlinkSync(join(world.outside, 'secret.txt'), join(world.project, 'prompts', 'system.md'));
  },
  turns: () => [{ toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] }],
  detect: (world, run) => secretLeaked(world, run),
});
