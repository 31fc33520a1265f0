/**
 * Reads the sandbox options from YAML (`sandbox: {kind, network, image, memory_mb, ...}`). The
 * schema checks them at load time; this check repeats the part the sandboxes rely on, so a
 * sandbox created from code gets the same clear message.
 */
import { sandboxDefaults } from '../../config/defaults.js';
import { readSandboxUser, type SandboxUser } from '../../config/sandbox-user.js';
import { SandboxError } from './sandbox-errors.js';

export type { SandboxUser };

export interface SandboxOptions {
  /** Docker image. */
  image: string;
  /** Memory limit: the container's memory (docker), the address-space limit of each process (bwrap). */
  memoryMb: number;
  /** CPU limit of the container (docker only). */
  cpus: number;
  /** Most processes at once: the container's pids limit (docker), RLIMIT_NPROC (bwrap). */
  pids: number;
  /** The unprivileged user commands run as, when the sandbox chooses one; see `sandboxUserFor`. */
  user: SandboxUser | undefined;
  /** Names of host environment variables passed into the sandbox. */
  passEnvironment: string[];
}

/** The conventional `nobody:nogroup`, which owns nothing on a typical system. */
export const fallbackSandboxUser: SandboxUser = { uid: 65534, gid: 65534 };

export function readSandboxOptions(options: Record<string, unknown>): SandboxOptions {
  return {
    image: readString(options, 'image') ?? sandboxDefaults.image,
    memoryMb: readPositiveNumber(options, 'memory_mb', { integer: true }) ?? sandboxDefaults.memory_mb,
    cpus: readPositiveNumber(options, 'cpus', { integer: false }) ?? sandboxDefaults.cpus,
    pids: readPositiveNumber(options, 'pids', { integer: true }) ?? sandboxDefaults.pids,
    user: options.user === undefined ? undefined : parseSandboxUser(readString(options, 'user') ?? ''),
    passEnvironment: readNames(options, 'pass_env') ?? [...sandboxDefaults.pass_env],
  };
}

/** Parses "uid" or "uid:gid"; root and privileged groups are refused (see config/sandbox-user.ts). */
export function parseSandboxUser(text: string): SandboxUser {
  const user = readSandboxUser(text);
  if ('problem' in user) throw new SandboxError('sandbox_options_invalid', `${user.problem}.`);
  return user;
}

function readString(options: Record<string, unknown>, key: string): string | undefined {
  const value = options[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') {
    throw new SandboxError('sandbox_options_invalid', `sandbox.${key} must be a non-empty string.`);
  }
  return value;
}

function readPositiveNumber(
  options: Record<string, unknown>,
  key: string,
  { integer }: { integer: boolean },
): number | undefined {
  const value = options[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !(value > 0) || (integer && !Number.isInteger(value))) {
    const expected = integer ? 'a positive integer' : 'a positive number';
    throw new SandboxError('sandbox_options_invalid', `sandbox.${key} must be ${expected}, not ${JSON.stringify(value)}.`);
  }
  return value;
}

function readNames(options: Record<string, unknown>, key: string): string[] | undefined {
  const value = options[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((name) => typeof name === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name))) {
    throw new SandboxError('sandbox_options_invalid', `sandbox.${key} must be a list of environment variable names.`);
  }
  return value;
}
