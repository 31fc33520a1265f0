/**
 * The environment commands see. It is built, not inherited: the runtime's own variables hold
 * provider keys and tokens, and code a model wrote has no business reading them. Variables a
 * recipe needs inside (a proxy, a locale) are passed by name with `sandbox.pass_env`.
 */
import { homedir } from 'node:os';
import type { SandboxKind } from '../../contract/sandbox-types.js';

/** Where an isolated sandbox points HOME: its own /tmp, the one place it may write besides the workspace. */
const isolatedHome = '/tmp';

export function sandboxEnvironment(kind: SandboxKind, passEnvironment: readonly string[]): Record<string, string> {
  const environment: Record<string, string> = {
    HOME: kind === 'host' ? (process.env.HOME ?? homedir()) : isolatedHome,
    LANG: kind === 'docker' ? 'C.UTF-8' : (process.env.LANG ?? 'C.UTF-8'),
    TERM: 'dumb',
  };
  // A container brings its own PATH in its image; host and bwrap run the host's programs.
  if (kind !== 'docker' && process.env.PATH) environment.PATH = process.env.PATH;
  for (const name of passEnvironment) {
    const value = process.env[name];
    if (value !== undefined) environment[name] = value;
  }
  return environment;
}
