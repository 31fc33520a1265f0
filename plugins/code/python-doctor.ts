/**
 * python_execute's part of `manus doctor`: whether the interpreter it would run exists, and
 * whether it imports the libraries the shipped data agents use. Run on this machine: bubblewrap
 * and the host run the same interpreter; the docker image brings its own (its tag names its packages).
 */
import { execFile } from 'node:child_process';
import type { DoctorContext, DoctorFinding } from 'manus-runtime';
import { pythonInterpreter, pythonVariable } from './python-interpreter.js';

/** What the data_analysis agent's code imports, with the Debian package that provides each. */
export const dataLibraries: ReadonlyArray<{ module: string; debian: string }> = [
  { module: 'pandas', debian: 'python3-pandas' },
  { module: 'numpy', debian: 'python3-numpy' },
  { module: 'matplotlib', debian: 'python3-matplotlib' },
  { module: 'openpyxl', debian: 'python3-openpyxl' },
];

/** Prints a JSON object: the Python version and path, and each module's version or the import error. */
const probeSource = `
import importlib, json, sys
found = {}
for name in sys.argv[1:]:
    try:
        found[name] = {"version": str(getattr(importlib.import_module(name), "__version__", "?"))}
    except Exception as error:
        found[name] = {"error": type(error).__name__ + ": " + str(error)}
print(json.dumps({"python": sys.version.split()[0], "executable": sys.executable, "modules": found}))
`;

interface ProbeReport {
  python: string;
  executable: string;
  modules: Record<string, { version?: string; error?: string }>;
}

export async function checkPython(setting: unknown, context: DoctorContext): Promise<DoctorFinding[]> {
  const python = pythonInterpreter(setting, context.environment);
  if (typeof python !== 'string' || python.trim() === '') {
    return [{ check: 'python', status: 'missing', detail: 'tool_settings.python_execute.python is not a program name', fix: 'set it to a Python 3 interpreter, such as /usr/bin/python3' }];
  }
  const source = setting !== undefined ? 'tool_settings.python_execute.python' : context.environment[pythonVariable] ? pythonVariable : 'the first python3 on PATH';
  let report: ProbeReport;
  try {
    report = await probe(python, context);
  } catch (error) {
    return [{
      check: 'python',
      status: 'missing',
      detail: `${python} (${source}) does not run: ${(error as Error).message.split('\n')[0]}`,
      fix: `install Python 3 (apt-get install python3), or point ${pythonVariable} or tool_settings.python_execute.python at an interpreter`,
    }];
  }
  const findings: DoctorFinding[] = [{ check: 'python', status: 'ok', detail: `${python} (${source}): Python ${report.python} at ${report.executable}` }];
  const missing = dataLibraries.filter((library) => report.modules[library.module]?.version === undefined);
  if (missing.length === 0) {
    const versions = dataLibraries.map((library) => `${library.module} ${report.modules[library.module].version}`);
    findings.push({ check: 'python libraries', status: 'ok', detail: versions.join(', ') });
  } else {
    const names = missing.map((library) => library.module);
    findings.push({
      check: 'python libraries',
      status: 'missing',
      detail: `${python} cannot import ${names.join(', ')}`,
      fix:
        `apt-get install ${missing.map((library) => library.debian).join(' ')} and set ${pythonVariable}=/usr/bin/python3 ` +
        `(Debian's Python sees them; another python3 first on PATH may not), or install them for this interpreter (${report.executable} -m pip install ${names.join(' ')})`,
    });
  }
  return findings;
}

function probe(python: string, context: DoctorContext): Promise<ProbeReport> {
  const modules = dataLibraries.map((library) => library.module);
  return new Promise((resolve, reject) => {
    // Only what the sandbox passes too: the runtime's own variables hold keys a program has no business reading.
    const { PATH, HOME, LANG } = context.environment;
    const environment = { PATH, HOME, LANG, PYTHONDONTWRITEBYTECODE: '1', MPLBACKEND: 'Agg' };
    execFile(python, ['-c', probeSource, ...modules], { signal: context.signal, timeout: 20_000, env: environment }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error((error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : (stderr.trim() || error.message)));
        return;
      }
      try {
        resolve(JSON.parse(stdout) as ProbeReport);
      } catch {
        reject(new Error(`unexpected output: ${stdout.slice(0, 200)}`));
      }
    });
  });
}
