/**
 * `manus runs`: the runs in the runs folder, newest first; `manus runs <id>`: one run's
 * transcript. Both return an exit code (0, or 2 for a run that does not exist) and leave exiting
 * to main.ts. Events files are redacted as they are written; what these commands print is
 * redacted again with the secrets of the current environment, for runs recorded without them.
 */
import { formatRunTable, formatTranscript } from '../runtime/applications/reports/run-transcript.js';
import { listRuns, readRun, RunLookupError, type RunRecord } from '../runtime/runs/run-history.js';
import { runsDirectoryFor } from '../runtime/runs/run-preparation.js';
import { currentRedactor } from './current-redactor.js';
import { ExitCode, exitCodeForError } from './exit-codes.js';
import { terminalText } from '../runtime/services/terminal-text.js';

export interface RunsCommandOptions {
  json?: boolean;
  /** The runs folder; default $MANUS_RUNS_DIR, else .manus/runs in the current folder. */
  runsDir?: string;
}

export interface ShowRunOptions extends RunsCommandOptions {
  /** Tool arguments, results and check output in full instead of shortened. */
  full?: boolean;
}

/** Where the commands write; the process's streams unless a caller captures them. */
export interface CommandOutput {
  out(text: string): void;
  error(text: string): void;
}

// Transcripts and tables quote models, tools and pages: shown terminal-safe. JSON is data and
// prints the text as it was recorded.
const processOutput: CommandOutput = {
  out: (text) => process.stdout.write(text),
  error: (text) => process.stderr.write(terminalText(text)),
};

export async function runsCommand(options: RunsCommandOptions, output: CommandOutput = processOutput): Promise<number> {
  const runsDirectory = runsDirectoryFor(process.cwd(), process.env, options.runsDir);
  const summaries = currentRedactor().redactValue(await listRuns(runsDirectory));
  if (options.json) {
    output.out(`${JSON.stringify(summaries, null, 2)}\n`);
    return ExitCode.success;
  }
  for (const summary of summaries) {
    for (const warning of summary.warnings) output.error(`warning: run ${summary.id}: ${warning}\n`);
  }
  if (summaries.length === 0) output.error(`no runs in ${runsDirectory}\n`);
  else output.out(terminalText(`${formatRunTable(summaries)}\n`));
  return ExitCode.success;
}

export async function showRunCommand(id: string, options: ShowRunOptions, output: CommandOutput = processOutput): Promise<number> {
  let run: RunRecord;
  try {
    run = await readRun(runsDirectoryFor(process.cwd(), process.env, options.runsDir), id);
  } catch (error) {
    if (!RunLookupError.isInstance(error)) throw error;
    output.error(`manus: ${error.message}\n`);
    return exitCodeForError(error);
  }
  // Redacted before the transcript shortens anything, so no cut leaves part of a secret.
  const shown = currentRedactor().redactValue(run);
  if (options.json) output.out(`${JSON.stringify({ ...shown.summary, events: shown.events }, null, 2)}\n`);
  else output.out(terminalText(formatTranscript(shown, { full: options.full })));
  return ExitCode.success;
}
