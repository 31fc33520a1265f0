/**
 * Which Python python_execute runs: `tool_settings.python_execute.python`, else the MANUS_PYTHON
 * environment variable, else the first `python3` on PATH. The variable lets a machine whose first
 * python3 lacks the data libraries (a pyenv or virtualenv shim) point every run at one that has them.
 */
export const pythonVariable = 'MANUS_PYTHON';
export const defaultPython = 'python3';

export function pythonInterpreter(setting: unknown, environment: Readonly<Record<string, string | undefined>>): unknown {
  return setting ?? (environment[pythonVariable] || undefined) ?? defaultPython;
}
