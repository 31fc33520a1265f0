/**
 * bwrap and the container's exec wrapper report a child killed by signal N as exit status
 * 128 + N, the shell convention. Decoding it gives the same result shape as a host process.
 */
import { constants } from 'node:os';
import type { SessionExit } from '../../contract/sandbox-types.js';

const signalNames = new Map<number, NodeJS.Signals>(
  Object.entries(constants.signals).map(([name, number]) => [number, name as NodeJS.Signals]),
);

export function decodeExitStatus(status: number): SessionExit {
  const signal = status > 128 ? signalNames.get(status - 128) : undefined;
  return signal ? { exitCode: null, signal } : { exitCode: status, signal: null };
}
