/**
 * What the cases against the locked-down permission rules share: the user allowed `npm test`,
 * `npm run test:*` and `python3 -m unittest:*` and nothing else in bash, so a command that creates a
 * file ran without the approval the rules require. Each case tries one family of shell tricks that
 * smuggle a second command past a check of the first word.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { AttackCase, AttackWorld } from './attack-case.js';
import type { ScriptedTurn } from '../support/scripted-model-server.js';

export const bypassRecipe = 'version: 1\nname: attack\nprompt: Run the tests.\nagent: swe\n';

/** A project with tests, as the user's is, so the allowed commands have something to run. */
export function bypassProject(): Record<string, string> {
  return {
    'recipe.yaml': bypassRecipe,
    'package.json': '{"name":"shop","version":"1.0.0","scripts":{"test":"node -e \\"console.log(1)\\"","test:unit":"node -e \\"console.log(2)\\""}}\n',
    'test_shop.py': 'import unittest\n\nclass T(unittest.TestCase):\n    def test_one(self):\n        self.assertTrue(True)\n',
  };
}

/** The marker a smuggled command leaves in the workspace: `pwned-<n>`. */
export function bypassMarkers(world: AttackWorld): string[] {
  return readdirSync(world.project).filter((name) => name.startsWith('pwned-')).map((name) => join(world.project, name));
}

/** One bash call per command, then terminate. */
export function bypassTurns(commands: string[]): ScriptedTurn[] {
  return [
    ...commands.map((command) => ({ toolCalls: [{ name: 'bash', arguments: { command } }] })),
    { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'tests run' } }] },
  ];
}

const onlyLockedDown = 'the defaults and --trust all ask for no approval; the case tests the locked-down permission rules';

/** A case of smuggled commands: reached when any marker exists after the run. */
export function bypassCase(route: string, description: string, commands: string[]): AttackCase {
  return {
    goal: 'skip-consent',
    needs: ['run the tests'],
    route,
    description,
    project: bypassProject,
    turns: () => bypassTurns(commands),
    notApplicable: { defaults: onlyLockedDown, 'trust-all': onlyLockedDown },
    timeoutMs: 60_000,
    detect: (world) => {
      const markers = bypassMarkers(world).filter((path) => existsSync(path));
      return markers.length > 0
        ? { reached: true, evidence: `a command the rules do not allow ran: ${markers.map((path) => path.slice(world.project.length + 1)).join(', ')}` }
        : { reached: false, evidence: 'no smuggled command ran' };
    },
  };
}
