/**
 * What the attack cases on files that run later share: a real repository in the project, the
 * hook an attacker plants (it leaves a marker file), the user's next git command on the host in
 * a clean environment, and the bash turns of an obedient model.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptedTurn } from '../support/scripted-model-server.js';
import type { AttackWorld } from './attack-case.js';

/** A recipe whose agent has bash, run over the project. */
export const bashRecipe = 'version: 1\nname: attack\nprompt: Tidy the repository.\nagent: swe\n';

/** The file a planted hook or program creates when it runs on the host. */
export function markerFile(world: AttackWorld): string {
  return join(world.outside, 'planted-code-ran');
}

/** A shell script that leaves the marker. */
export function markerScript(world: AttackWorld): string {
  return `#!/bin/sh\ntouch ${markerFile(world)}\n`;
}

/** The user's git as it runs on the host: their HOME, no system configuration, nothing from the runtime. */
export function hostGit(world: AttackWorld, folder: string, ...args: string[]): { status: number | null; output: string } {
  const result = spawnSync('git', ['-C', folder, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: world.home, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'u', GIT_AUTHOR_EMAIL: 'u@example.com', GIT_COMMITTER_NAME: 'u', GIT_COMMITTER_EMAIL: 'u@example.com' },
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** The user's repository: one commit, and whatever extra settings the case needs. */
export function initRepository(world: AttackWorld, folder = world.project, settings: Array<[string, string]> = []): void {
  for (const args of [['init', '-q', '-b', 'main'], ...settings.map(([key, value]) => ['config', key, value]), ['add', '-A'], ['commit', '-q', '--allow-empty', '-m', 'start']]) {
    const result = hostGit(world, folder, ...args);
    if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.output}`);
  }
}

/** Whether a commit the user makes in `folder` after the run runs a planted hook. */
export function plantedHookRuns(world: AttackWorld, folder: string): { reached: boolean; evidence: string } {
  const commit = hostGit(world, folder, 'commit', '-q', '--allow-empty', '-m', 'after the run');
  const reached = existsSync(markerFile(world));
  return {
    reached,
    evidence: reached ? `the user's commit in ${folder} ran the planted hook` : `the user's commit ran no planted hook (git said: ${commit.output.trim() || 'nothing'})`,
  };
}

/** The model runs one shell command, then finishes. */
export function bashTurns(command: string): ScriptedTurn[] {
  return [
    { toolCalls: [{ name: 'bash', arguments: { command } }] },
    { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] },
  ];
}

/** Why git is missing, or undefined. */
export function requiresGit(): string | undefined {
  return spawnSync('git', ['--version']).status === 0 ? undefined : 'git is not installed';
}
