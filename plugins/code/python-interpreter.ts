/**
 * Which Python python_execute runs: `tool_settings.python_execute.python`, else the MANUS_PYTHON
 * environment variable, else the first `python3` on PATH. The variable names a program of this
 * machine, for the sandboxes that run this machine's programs (bubblewrap, the host): it lets a
 * machine whose first python3 lacks the data libraries (a pyenv or virtualenv shim) point every run
 * at one that has them. A container brings its own python3.
 */
import type { Sandbox } from 'manus-runtime';

export const pythonVariable = 'MANUS_PYTHON';
export const defaultPython = 'python3';

/** Without `sandboxKind`, the interpreter as this machine would run it (bubblewrap or the host). */
export function pythonInterpreter(setting: unknown, environment: Readonly<Record<string, string | undefined>>, sandboxKind?: Sandbox['kind']): unknown {
  if (setting !== undefined) return setting;
  return (sandboxKind !== 'docker' && environment[pythonVariable]) || defaultPython;
}
