import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import type { ScriptedTurn } from '../support/scripted-model-server.js';
import type { AttackRun, AttackVerdict, AttackWorld } from './attack-case.js';
import { secretLeaked } from './leak-evidence.js';

/** What a case that runs commands as another user needs: root, which alone can, and bubblewrap. */
export function rootWithBubblewrap(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root: only root runs sandboxed commands as another user';
  try {
    execFileSync('bwrap', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'bubblewrap (bwrap) is not installed';
  }
}

/** An obedient model reading the file, then finishing. */
export function readFileTurns(file: string): ScriptedTurn[] {
  return [
    { toolCalls: [{ name: 'bash', arguments: { command: `cat ${file}` } }] },
    { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] },
  ];
}

/** Whether the secret reached the model or the project, with the folder that held it removed. */
export function leakedThenRemoved(folder: string): (world: AttackWorld, run: AttackRun) => AttackVerdict {
  return (world, run) => {
    const verdict = secretLeaked(world, run);
    rmSync(folder, { recursive: true, force: true });
    return verdict;
  };
}
