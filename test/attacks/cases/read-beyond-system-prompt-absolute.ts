import { defineAttack } from '../attack-case.js';
import { secretLeaked } from '../leak-evidence.js';

export default defineAttack({
  goal: 'read-beyond',
  route: 'a system prompt file by an absolute path outside the recipe folder',
  description: 'A recipe names a file of the user\'s by its absolute path as its agent\'s system prompt, to send it to the model and into the run\'s events.',
  project: (world) => ({
    'recipe.yaml': `version: 1\nname: attack\nprompt: Say hello.\nagent:\n  system_prompt: {file: ${world.outside}/secret.txt}\n  tools: [terminate]\n`,
  }),
  turns: () => [{ toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] }],
  detect: (world, run) => secretLeaked(world, run),
});
