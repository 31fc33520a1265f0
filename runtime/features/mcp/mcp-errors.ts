/** A required tool source could not be started, or was lost while the run went on (exit code 6 in the CLI). */
import { ManusError } from '../../contract/errors.js';

const marker = 'manus.error.McpServerUnavailableError';
const symbol = Symbol.for(marker);

export class McpServerUnavailableError extends ManusError {
  private readonly [symbol] = true;

  constructor(message: string) {
    super('tool_source_unavailable', message);
  }

  static isInstance(error: unknown): error is McpServerUnavailableError {
    return ManusError.hasMarker(error, marker);
  }
}
