/**
 * Errors of the sandboxes. They extend ToolError so that a tool which cannot get its sandbox
 * returns the reason to the model instead of failing the run.
 */
import { ManusError, ToolError } from '../../contract/errors.js';

export type SandboxErrorCode =
  /** The requested kind cannot run here: no bwrap, no Docker daemon, no image. */
  | 'sandbox_unavailable'
  /** `sandbox` settings in YAML have a value of the wrong type or meaning. */
  | 'sandbox_options_invalid'
  /** Starting a command or a session failed for a reason other than the command itself. */
  | 'sandbox_failed';

const sandboxErrorMarker = 'manus.error.SandboxError';
const sandboxErrorSymbol = Symbol.for(sandboxErrorMarker);

export class SandboxError extends ToolError {
  private readonly [sandboxErrorSymbol] = true;

  constructor(code: SandboxErrorCode, message: string) {
    super(message, code);
  }

  static isInstance(error: unknown): error is SandboxError {
    return ManusError.hasMarker(error, sandboxErrorMarker);
  }
}
