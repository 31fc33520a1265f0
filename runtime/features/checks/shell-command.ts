/**
 * Runs a recipe's shell command (a command check, or `retry.on_failure`) in the workspace. It
 * goes through the run's sandbox when there is one, because the command usually runs code the
 * agent wrote; otherwise through /bin/sh on the host, in its own process group, so a timeout ends
 * everything it started.
 */
import { readSandboxOptions } from '../../services/sandbox/sandbox-options.js';
import type { Sandbox } from '../../contract/sandbox-types.js';
import { truncateMiddle } from '../../contract/truncate.js';
import type { SandboxSource } from '../../config/check-types.js';

export interface ShellCommandOptions {
  workspace: string;
  timeoutSeconds: number;
  signal: AbortSignal;
  sandbox?: SandboxSource;
}

export interface ShellCommandOutcome {
  /** Null when the command was ended by a signal, a timeout or an abort. */
  exitCode: number | null;
  timedOut: boolean;
  aborted: boolean;
  /** Standard output then standard error, shortened in the middle when long. */
  output: string;
  durationMs: number;
}

/** Bytes of each stream kept while the command runs. */
const streamLimitBytes = 64 * 1024;
/** Characters of combined output kept for reports and retry prompts. */
export const outputLimitCharacters = 4000;

export async function runShellCommand(command: string, options: ShellCommandOptions): Promise<ShellCommandOutcome> {
  if (options.sandbox === undefined) {
    // Loaded here: a run without shell checks never starts a process on the host.
    const { HostSandbox } = await import('../../services/sandbox/host-sandbox.js');
    const host = await HostSandbox.create({ workspace: options.workspace, options: readSandboxOptions({}) });
    try {
      return await runInSandbox(host, command, options);
    } finally {
      await host.dispose();
    }
  }
  const sandbox = typeof options.sandbox === 'function' ? await options.sandbox() : options.sandbox;
  return runInSandbox(sandbox, command, options);
}

async function runInSandbox(sandbox: Sandbox, command: string, options: ShellCommandOptions): Promise<ShellCommandOutcome> {
  const result = await sandbox.run(command, {
    timeoutMs: Math.round(options.timeoutSeconds * 1000),
    signal: options.signal,
    outputLimitBytes: streamLimitBytes,
  });
  return {
    exitCode: result.timedOut || result.aborted ? null : result.exitCode,
    timedOut: result.timedOut,
    aborted: result.aborted,
    output: combineOutput(result.stdout.toString('utf8'), result.stderr.toString('utf8')),
    durationMs: result.durationMs,
  };
}

/** One line saying how a command ended, for reports. */
export function describeEnding(outcome: ShellCommandOutcome, timeoutSeconds: number): string {
  if (outcome.timedOut) return `timed out after ${timeoutSeconds} s and was killed`;
  if (outcome.aborted) return 'was interrupted';
  if (outcome.exitCode === null) return 'was killed by a signal';
  return `exited with status ${outcome.exitCode}`;
}

/** Wraps a lazy source so that many commands ask it once and share one sandbox. */
export function sandboxOnce(source: SandboxSource): SandboxSource {
  if (typeof source !== 'function') return source;
  let sandbox: Promise<Sandbox> | undefined;
  return () => (sandbox ??= source());
}

function combineOutput(stdout: string, stderr: string): string {
  const parts = [stdout.trimEnd(), stderr.trimEnd()].filter((part) => part !== '');
  return truncateMiddle(parts.join('\n'), outputLimitCharacters, 'the output was shortened').text;
}
