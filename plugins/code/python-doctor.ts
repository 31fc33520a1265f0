/**
 * python_execute's part of `manus doctor`: whether the interpreter it would run exists, and
 * whether it imports the libraries the shipped data agents use. Checked in the sandbox the runs
 * would use, as python_execute would start it there: the first python3 on PATH inside bubblewrap is
 * not always the host's (a pyenv shim in a folder the sandbox user cannot enter), and the docker
 * image brings its own.
 */
import type { DoctorContext, DoctorFinding, Sandbox } from 'manus-runtime';
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

const placeNames: Record<Sandbox['kind'], string> = { bwrap: 'in bubblewrap', docker: 'in the Docker sandbox', host: 'on the host' };

export async function checkPython(setting: unknown, context: DoctorContext): Promise<DoctorFinding[]> {
  const sandbox = await context.sandbox();
  const place = placeNames[sandbox.kind];
  const python = pythonInterpreter(setting, context.environment, sandbox.kind);
  if (typeof python !== 'string' || python.trim() === '') {
    return [{ check: 'python', status: 'missing', detail: 'tool_settings.python_execute.python is not a program name', fix: 'set it to a Python 3 interpreter, such as /usr/bin/python3' }];
  }
  const source = setting !== undefined
    ? 'tool_settings.python_execute.python'
    : python !== pythonInterpreter(undefined, {}, sandbox.kind) ? pythonVariable : 'the first python3 on PATH';
  let report: ProbeReport;
  try {
    report = await probe(python, sandbox, context.signal);
  } catch (error) {
    return [{
      check: 'python',
      status: 'missing',
      detail: `${python} (${source}) does not run ${place}: ${(error as Error).message.split('\n')[0]}`,
      fix: `install Python 3 (apt-get install python3), or point ${pythonVariable} or tool_settings.python_execute.python at an interpreter`,
    }];
  }
  const findings: DoctorFinding[] = [{ check: 'python', status: 'ok', detail: `${python} (${source}): Python ${report.python} at ${report.executable}, ${place}` }];
  const missing = dataLibraries.filter((library) => report.modules[library.module]?.version === undefined);
  if (missing.length === 0) {
    const versions = dataLibraries.map((library) => `${library.module} ${report.modules[library.module].version}`);
    findings.push({ check: 'python libraries', status: 'ok', detail: versions.join(', ') });
  } else {
    const names = missing.map((library) => library.module);
    findings.push({
      check: 'python libraries',
      status: 'missing',
      detail: `${python} cannot import ${names.join(', ')} ${place}`,
      fix:
        `apt-get install ${missing.map((library) => library.debian).join(' ')} and set ${pythonVariable}=/usr/bin/python3 ` +
        `(Debian's Python sees them; another python3 first on PATH may not), or install them for this interpreter (${report.executable} -m pip install ${names.join(' ')})`,
    });
  }
  return findings;
}

/** Runs the probe as python_execute runs code: in the sandbox, with its environment (no keys of the runtime's). */
async function probe(python: string, sandbox: Sandbox, signal: AbortSignal): Promise<ProbeReport> {
  const modules = dataLibraries.map((library) => library.module);
  const result = await sandbox.run([python, '-c', probeSource, ...modules], {
    timeoutMs: 20_000,
    signal,
    env: { PYTHONDONTWRITEBYTECODE: '1', MPLBACKEND: 'Agg' },
  });
  const stdout = result.stdout.toString('utf8');
  if (result.exitCode !== 0) {
    const stderr = result.stderr.toString('utf8').trim();
    throw new Error(notFound(stderr) ? 'not found' : stderr || `it ended with status ${result.exitCode ?? result.signal}`);
  }
  try {
    return JSON.parse(stdout) as ProbeReport;
  } catch {
    throw new Error(`unexpected output: ${stdout.slice(0, 200)}`);
  }
}

/** What the sandboxes' launchers (prlimit, env, docker exec) say of a program that is not there. */
function notFound(stderr: string): boolean {
  return /No such file or directory|not found/i.test(stderr.split('\n')[0] ?? '');
}
