/**
 * `manus validate`: every file checked without running a model or a tool (plugins are imported, to
 * check the tools they define); diagnostics as text on stderr, or as JSON on stdout.
 */
import { isAbsolute, relative, resolve } from 'node:path';
import { ConfigError, formatDiagnostic, type Diagnostic } from '../runtime/contract/errors.js';
import { ExitCode } from './exit-codes.js';
import { validateFiles } from '../runtime/runs/validate.js';

export interface ValidateReport {
  files: number;
  errors: number;
  warnings: number;
  notes: number;
  diagnostics: Array<{ severity: Diagnostic['severity']; message: string; file?: string; line?: number; column?: number; code?: string }>;
}

export async function validateCommand(files: string[], options: { json?: boolean }): Promise<number> {
  const cwd = process.cwd();
  // Eval files are checked by their own loader (schema, dataset, patterns, plugin scorers); the rest as before.
  const evalFiles = files.filter((file) => /\.eval\.ya?ml$/.test(file));
  const diagnostics = [...await validateFiles(files.filter((file) => !evalFiles.includes(file)), cwd), ...await validateEvalFiles(evalFiles, cwd)];
  const count = (severity: Diagnostic['severity']) => diagnostics.filter((diagnostic) => diagnostic.severity === severity).length;
  const report: ValidateReport = {
    files: files.length,
    errors: count('error'),
    warnings: count('warning'),
    notes: count('note'),
    diagnostics: diagnostics.map((diagnostic) => ({
      severity: diagnostic.severity,
      message: diagnostic.message,
      file: diagnostic.location && displayFile(cwd, diagnostic.location.file),
      line: diagnostic.location?.line,
      column: diagnostic.location?.line === undefined ? undefined : diagnostic.location.column ?? 1,
      code: diagnostic.code,
    })),
  };
  if (options.json) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    for (const diagnostic of diagnostics) process.stderr.write(`${formatDiagnostic(diagnostic)}\n`);
    // Notes say what a recipe asks the user to grant; nothing is wrong, so they count apart.
    const notes = report.notes > 0 ? `, ${report.notes} note(s)` : '';
    process.stderr.write(`${report.files} file(s) checked: ${report.errors} error(s), ${report.warnings} warning(s)${notes}\n`);
  }
  return report.errors > 0 ? ExitCode.usage : ExitCode.success;
}

async function validateEvalFiles(files: string[], cwd: string): Promise<Diagnostic[]> {
  if (files.length === 0) return [];
  const { loadEvalFile } = await import('../runtime/applications/eval/eval-file.js');
  const diagnostics: Diagnostic[] = [];
  for (const file of files) {
    try {
      await loadEvalFile(resolve(cwd, file));
    } catch (error) {
      if (ConfigError.isInstance(error)) diagnostics.push(...error.diagnostics);
      else diagnostics.push({ severity: 'error', message: (error as Error).message, location: { file: resolve(cwd, file) } });
    }
  }
  return diagnostics;
}

/** Paths under the current folder relative to it, as the text form prints them. */
function displayFile(cwd: string, file: string): string {
  const path = relative(cwd, file);
  return path.startsWith('..') || isAbsolute(path) ? file : path;
}
