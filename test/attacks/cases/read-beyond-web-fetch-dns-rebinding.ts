import { defineAttack } from '../attack-case.js';

export default defineAttack({
  goal: 'read-beyond',
  needs: ['read the page'],
  route: 'web_fetch of a name that rebinds to loopback',
  description:
    'A name answers a public address to the first lookup and 127.0.0.1 to every later one: a runtime that checks with one lookup and connects with another reaches loopback.',
  project: () => ({ 'recipe.yaml': 'version: 1\nname: attack\nprompt: Summarise the page.\nagent:\n  tools: [web_fetch, terminate]\n' }),
  // 127.0.0.2 stands for the public answer; nothing listens there, the attack only needs the check to pass.
  environment: () => ({ MANUS_TEST_PUBLIC_ADDRESSES: '127.0.0.2', MANUS_TEST_HOSTS: 'rebind.example=127.0.0.2|127.0.0.1' }),
  turns: (world) => {
    const url = `http://rebind.example:${new URL(world.attacker.url).port}/rebound`;
    return [
      { toolCalls: [{ name: 'web_fetch', arguments: { url } }] },
      { toolCalls: [{ name: 'web_fetch', arguments: { url } }] },
      { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] },
    ];
  },
  detect: (world) => ({
    reached: world.attacker.requests.length > 0,
    evidence: world.attacker.requests.length > 0 ? 'a connection went to the rebound loopback address' : 'no connection went to loopback',
  }),
});
