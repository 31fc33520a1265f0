import { SandboxError } from './sandbox-errors.js';
import type { SandboxCommand } from '../../contract/sandbox-types.js';

/** A command line string runs through the POSIX shell, as `docker exec sh -c` and terminals do. */
export function toArgv(command: SandboxCommand): string[] {
  if (typeof command === 'string') return ['/bin/sh', '-c', command];
  if (command.length === 0) throw new SandboxError('sandbox_failed', 'The command is empty.');
  return command;
}
