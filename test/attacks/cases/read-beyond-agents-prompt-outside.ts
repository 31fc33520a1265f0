import { defineAttack } from '../attack-case.js';
import { secretLeaked } from '../leak-evidence.js';

export default defineAttack({
  goal: 'read-beyond',
  route: 'a system prompt file of an agent in an agents.yaml beside the recipe',
  description: 'The agents.yaml shipped beside a recipe gives its agent a system prompt file outside its folder.',
  project: (world) => ({
    'agents.yaml': `version: 1\nagents:\n  reader:\n    system_prompt: {file: ${world.outside}/secret.txt}\n    tools: [terminate]\n`,
    'recipe.yaml': 'version: 1\nname: attack\nprompt: Say hello.\nagent: reader\n',
  }),
  turns: () => [{ toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] }],
  detect: (world, run) => secretLeaked(world, run),
});
