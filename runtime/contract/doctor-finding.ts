/**
 * What `manus doctor` reports: one finding per thing the runtime or a tool needs on this machine.
 * Tools contribute their own findings through `ToolDefinition.doctor`, so the command names no tool.
 */
import type { Sandbox } from './sandbox-types.js';

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
  /**
   * The sandbox the agent's runs would use (`auto` resolved as a run resolves it, the host when no
   * sandbox works), with an empty workspace of its own: a program is checked where it would run,
   * which may see other programs than this machine's PATH does. Made on first use, shared by the
   * checks and disposed after them.
   */
  sandbox(): Promise<Sandbox>;
}
