/**
 * `manus view [run | batch | eval | events.jsonl]`: writes the report of a run, a batch or an eval as one HTML
 * page into its folder and prints the page's path; `--open` opens it. `manus view --serve` serves
 * the runs folder on 127.0.0.1 until interrupted. Reports are redacted with the secrets of the
 * current environment, on top of the redaction the events had when they were written.
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { batchFolderNames } from '../runtime/applications/reports/batch-folder.js';
import { writeBatchHtmlReport } from '../runtime/applications/reports/batch-html-report.js';
import { evalFolderFor, writeEvalHtmlReport } from '../runtime/applications/eval/eval-html-report.js';
import { evalRecordFileName, readEvalRecord } from '../runtime/applications/eval/eval-record.js';
import { htmlReportFileName, writeRunHtmlReport } from '../runtime/applications/reports/run-html-report.js';
import { eventsFileName, listRuns, resolveRunId, RunLookupError } from '../runtime/runs/run-history.js';
import { runsDirectoryFor } from '../runtime/runs/run-preparation.js';
import { UsageError } from '../runtime/contract/errors.js';
import { startViewServer } from '../runtime/applications/view/view-server.js';
import { currentRedactor } from './current-redactor.js';
import { ExitCode, exitCodeForError } from './exit-codes.js';

export interface ViewCommandOptions {
  open?: boolean;
  output?: string;
  serve?: boolean;
  port?: number;
  runsDir?: string;
  batchesDir?: string;
}

const defaultViewPort = 7780;

export async function viewCommand(target: string | undefined, options: ViewCommandOptions): Promise<number> {
  const runsDirectory = runsDirectoryFor(process.cwd(), process.env, options.runsDir);
  const batchesDirectory = options.batchesDir ? resolve(options.batchesDir) : join(dirname(runsDirectory), 'batches');
  if (options.serve) {
    if (target !== undefined) throw new UsageError('view --serve takes no run or batch: it serves them all');
    if (options.output !== undefined) throw new UsageError('view --serve writes no file: leave out --output');
    return serve(runsDirectory, batchesDirectory, options);
  }
  if (options.port !== undefined) throw new UsageError('--port goes with --serve');
  let file: string;
  try {
    file = await writeReport(target, runsDirectory, batchesDirectory, options.output);
  } catch (error) {
    if (!RunLookupError.isInstance(error)) throw error;
    process.stderr.write(`manus: ${error.message}\n`);
    return exitCodeForError(error);
  }
  process.stdout.write(`${file}\n`);
  if (options.open) openInBrowser(file);
  return ExitCode.success;
}

async function writeReport(target: string | undefined, runsDirectory: string, batchesDirectory: string, output: string | undefined): Promise<string> {
  const redactor = currentRedactor();
  const outputFor = (folder: string) => (output ? resolve(output) : join(folder, htmlReportFileName));
  if (target !== undefined && existsSync(target) && statSync(target).isFile()) {
    const eventsFile = resolve(target);
    const beside = basename(eventsFile) === eventsFileName ? join(dirname(eventsFile), htmlReportFileName) : join(dirname(eventsFile), `${basename(eventsFile, extname(eventsFile))}.html`);
    return writeRunHtmlReport(eventsFile, output ? resolve(output) : beside, { runDirectory: dirname(eventsFile), redactor, workspace: (recorded) => workspaceFolder(recorded, runsDirectory) });
  }
  const evalFolder = target === undefined ? undefined : evalFolderFor(join(dirname(runsDirectory), 'evals'), target);
  if (evalFolder) return writeEvalHtmlReport(evalFolder, outputFor(evalFolder), readEvalRecord(join(evalFolder, evalRecordFileName)), { redactor });
  const batch = target === undefined ? undefined : await batchFor(batchesDirectory, target, runsDirectory);
  if (batch) return (await writeBatchHtmlReport(batch, outputFor(batch), { redactor })).file;
  const id = target ?? (await newestRun(runsDirectory));
  const folder = join(runsDirectory, await resolveRunId(runsDirectory, id));
  const eventsFile = join(folder, eventsFileName);
  return writeRunHtmlReport(eventsFile, outputFor(folder), { runDirectory: folder, redactor, workspace: (recorded) => workspaceFolder(recorded, runsDirectory) });
}

async function newestRun(runsDirectory: string): Promise<string> {
  const [newest] = await listRuns(runsDirectory);
  if (!newest) throw new RunLookupError('run_not_found', `${runsDirectory} holds no runs`);
  return newest.id;
}

/** The batch folder `id` names, exactly or as a unique prefix, when no run has that id. */
async function batchFor(batchesDirectory: string, id: string, runsDirectory: string): Promise<string | undefined> {
  const names = await batchFolderNames(batchesDirectory);
  if (names.includes(id)) return join(batchesDirectory, id);
  try {
    await resolveRunId(runsDirectory, id);
    return undefined;
  } catch (error) {
    if (!RunLookupError.isInstance(error) || error.code !== 'run_not_found') throw error;
    const matches = names.filter((name) => name.startsWith(id));
    if (matches.length === 1) return join(batchesDirectory, matches[0]);
    if (matches.length > 1) throw new RunLookupError('run_ambiguous', `'${id}' matches ${matches.length} batches (${matches.slice(0, 10).join(', ')}); give more of the id`);
    throw new RunLookupError('run_not_found', `${error.message}, and no batch in ${batchesDirectory} has it either`);
  }
}

/**
 * The recorded workspace is relative to the folder the run started in; with the default runs
 * folder, that is the folder that holds `.manus`.
 */
function workspaceFolder(recorded: string, runsDirectory: string): string | undefined {
  if (isAbsolute(recorded)) return recorded;
  return [resolve(process.cwd(), recorded), resolve(runsDirectory, '..', '..', recorded)].find((candidate) => existsSync(candidate));
}

async function serve(runsDirectory: string, batchesDirectory: string, options: ViewCommandOptions): Promise<number> {
  const server = await startViewServer({ runsDirectory, batchesDirectory, port: options.port ?? defaultViewPort, redactor: currentRedactor() });
  process.stderr.write(`serving the runs in ${runsDirectory} (read-only) at ${server.url}; Ctrl-C stops\n`);
  process.stdout.write(`${server.url}\n`);
  if (options.open) openInBrowser(server.url);
  await new Promise<void>((done) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      done();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close();
  return ExitCode.success;
}

/** Hands the page to the desktop's browser, which outlives the command by design. */
function openInBrowser(target: string): void {
  const [command, args] = process.platform === 'darwin' ? ['open', [target]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '', target]] : ['xdg-open', [target]];
  const child = spawn(command, args as string[], { detached: true, stdio: 'ignore' });
  child.on('error', (error) => process.stderr.write(`manus: could not open ${target} with ${command}: ${error.message}; open it yourself\n`));
  child.unref();
}
