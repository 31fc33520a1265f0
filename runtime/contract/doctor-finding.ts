/**
 * What `manus doctor` reports: one finding per thing the runtime or a tool needs on this machine.
 * Tools contribute their own findings through `ToolDefinition.doctor`, so the command names no tool.
 */

/** `missing`: something needed is absent or broken. `warning`: it works, but not fully or not as set. */
export type DoctorStatus = 'ok' | 'missing' | 'warning';

export interface DoctorFinding {
  /** What was checked, in a word or two: `python`, `bubblewrap`, `model endpoint`. */
  check: string;
  status: DoctorStatus;
  /** What was found, in one line. */
  detail: string;
  /** How to fix it, when the status is not ok. */
  fix?: string;
}

/** What a tool's doctor check may use. */
export interface DoctorContext {
  /** The environment the runs would see: where settings' variables (MANUS_PYTHON, ...) are read. */
  environment: Readonly<Record<string, string | undefined>>;
  /** Ends the check when the command's deadline passes. */
  signal: AbortSignal;
}
