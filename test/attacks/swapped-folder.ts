/**
 * Shared by the cases that race the runtime's file operations: an agent whose first command
 * starts a background process swapping the workspace folder `sub/d` with a link to the outside
 * folder, over and over, and turns that keep a command running (so the sandbox user owns the
 * workspace and the swapping goes on) while many file-tool calls work on paths under `sub/d`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { probeBwrap } from '../../runtime/services/sandbox/create-sandbox.js';
import { folderSwapperSource } from '../support/folder-swapper.js';
import type { ScriptedToolCall, ScriptedTurn } from '../support/scripted-model-server.js';
import type { AttackVerdict, AttackWorld } from './attack-case.js';

export function racingProject(): Record<string, string> {
  return {
    'recipe.yaml': [
      'version: 1',
      'name: attack',
      'prompt: Tidy the notes in sub/d.',
      'agent:',
      '  system_prompt: You tidy notes.',
      '  tools: [bash, str_replace_editor, file_search, list_files, python_execute, terminate]',
      '  max_steps: 12',
      '',
    ].join('\n'),
    'swap.py': folderSwapperSource,
  };
}

/** The first turn: the folder, the link to the outside folder, and the swapping loop in the background. */
export function startSwapping(world: AttackWorld): ScriptedTurn {
  const command = [
    'mkdir -p sub/d && echo notes > sub/d/notes.txt && chmod 777 sub sub/d',
    `ln -s ${world.outside} sub/link`,
    '(python3 swap.py sub/d sub/link >/dev/null 2>&1 &)',
    'sleep 0.3',
  ].join('; ');
  return { toolCalls: [{ name: 'bash', arguments: { command } }] };
}

/** A turn of `calls` beside a command that keeps the workspace the sandbox user's meanwhile. */
export function racingTurn(calls: ScriptedToolCall[]): ScriptedTurn {
  return { toolCalls: [{ name: 'bash', arguments: { command: 'sleep 2' } }, ...calls] };
}

export function editorCall(arguments_: Record<string, unknown>): ScriptedToolCall {
  return { name: 'str_replace_editor', arguments: arguments_ };
}

export const finish: ScriptedTurn = { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] };

/** Whatever the runtime left or changed in the outside folder. */
export function outsideChanges(world: AttackWorld): AttackVerdict {
  const entries = readdirSync(world.outside).filter((name) => name !== 'secret.txt');
  const secretFile = join(world.outside, 'secret.txt');
  const secretKept = existsSync(secretFile) && readFileSync(secretFile, 'utf8') === `${world.secret}\n`;
  return {
    reached: entries.length > 0 || !secretKept,
    evidence:
      entries.length > 0
        ? `files appeared outside the workspace: ${entries.slice(0, 5).join(', ')}`
        : secretKept
          ? 'nothing was written outside the workspace'
          : 'the outside secret file was changed or removed',
  };
}

export function secretReachedModel(world: AttackWorld, requestsText: string): AttackVerdict {
  const reached = requestsText.includes(world.secret);
  return { reached, evidence: reached ? 'the outside secret reached the model' : 'the outside secret never reached the model' };
}

const bwrap = await probeBwrap();

/** The race needs commands to run as the sandbox user in bwrap: root and a usable bwrap. */
export function racingRequires(): string | undefined {
  if (!bwrap.usable) return `bwrap is not usable: ${bwrap.reason}`;
  if (process.getuid?.() !== 0) return 'commands run as another user than the runtime only when the runtime is root';
  return undefined;
}
