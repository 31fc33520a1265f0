/**
 * The process exit codes, a contract CI relies on, and how a run's ending or an error maps to
 * them. The runtime's results say a status and an error code; only the CLI turns them into an
 * exit code.
 */
import { ManusError } from '../runtime/contract/errors.js';
import { failureStatus, type RunStatus } from '../runtime/runs/run-status.js';

export const ExitCode = {
  success: 0,
  taskFailed: 1,
  usage: 2,
  budgetExhausted: 3,
  providerFailed: 4,
  permissionDenied: 5,
  /** A question only a person can answer came up with no one to ask; the run can be resumed with the answer. */
  needsInput: 5,
  /** A required tool source (an MCP server) could not be started, or was lost during the run. */
  toolSourceFailed: 6,
  /** `manus doctor` found something the runtime or a tool needs missing on this machine. */
  setupIncomplete: 7,
  interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * Codes of errors in what the user asked for (a command line, configuration, plugin or run id
 * that cannot be used): UsageError, ConfigError, PluginLoadError and RunLookupError.
 */
const usageErrorCodes: ReadonlySet<string> = new Set(['usage', 'config_invalid', 'plugin_invalid', 'run_not_found', 'run_ambiguous']);

/** The exit code of a run that ended with `status`; a run that an error ended goes by the error's code. */
export function exitCodeForStatus(status: RunStatus, errorCode?: string): ExitCodeValue {
  switch (status) {
    case 'success':
      return ExitCode.success;
    case 'failure':
    case 'stuck':
    case 'checks-failed':
      return ExitCode.taskFailed;
    case 'budget-exhausted':
      return ExitCode.budgetExhausted;
    case 'provider-failed':
      return ExitCode.providerFailed;
    case 'permission-denied':
      return ExitCode.permissionDenied;
    case 'needs-input':
      return ExitCode.needsInput;
    case 'interrupted':
      return ExitCode.interrupted;
    case 'tool-source-failed':
      return ExitCode.toolSourceFailed;
    case 'error':
      return errorCode !== undefined && usageErrorCodes.has(errorCode) ? ExitCode.usage : ExitCode.taskFailed;
  }
}

/** The exit code of a finished run, from its result. */
export function exitCodeForRun(result: { status: RunStatus; error?: { code: string } }): ExitCodeValue {
  return exitCodeForStatus(result.status, result.error?.code);
}

/** The exit code for an error that stopped a command: as for a run it had ended, 1 for errors of unknown kind. */
export function exitCodeForError(error: unknown): ExitCodeValue {
  if (!ManusError.isInstance(error)) return ExitCode.taskFailed;
  return exitCodeForStatus(failureStatus(error), error.code);
}

/** The exit code of a batch: 0 when every item succeeded, 3 when its budget ran out, 130 when interrupted, else 1. */
export function exitCodeForBatch(status: 'success' | 'failure' | 'budget-exhausted' | 'interrupted'): ExitCodeValue {
  switch (status) {
    case 'success':
      return ExitCode.success;
    case 'budget-exhausted':
      return ExitCode.budgetExhausted;
    case 'interrupted':
      return ExitCode.interrupted;
    case 'failure':
      return ExitCode.taskFailed;
  }
}
