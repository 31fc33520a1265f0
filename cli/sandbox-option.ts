import { InvalidArgumentError } from 'commander';
import type { SandboxSettings } from '../runtime/contract/tool.js';

/** Parses `--sandbox`: one of the sandbox kinds, or a usage error listing them. */
export function sandboxKind(value: string): SandboxSettings['kind'] {
  const kinds = ['auto', 'bwrap', 'docker', 'host'] as const;
  const kind = kinds.find((name) => name === value);
  if (!kind) throw new InvalidArgumentError(`expected one of ${kinds.join(', ')}`);
  return kind;
}
