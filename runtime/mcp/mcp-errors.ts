/** A required tool source could not be started, or was lost while the run went on: exit code 6. */
import { ExitCode, ManusError } from '../errors.js';

export class McpServerUnavailableError extends ManusError {
  constructor(message: string) {
    super('tool_source_unavailable', message, ExitCode.toolSourceFailed);
  }
}
