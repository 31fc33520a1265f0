/**
 * `manus runs`: the runs in the runs folder, newest first; `manus runs <id>`: one run's
 * transcript. Both return an exit code (0, or 2 for a run that does not exist) and leave exiting
 * to main.ts.
 */
import { ExitCode } from '../runtime/errors.js';
import { formatRunTable, formatTranscript } from '../runtime/reports/run-transcript.js';
import { listRuns, readRun, RunLookupError, type RunRecord } from '../runtime/run-history.js';
import { runsDirectoryFor } from '../runtime/run.js';

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

const processOutput: CommandOutput = {
  out: (text) => process.stdout.write(text),
  error: (text) => process.stderr.write(text),
};

export async function runsCommand(options: RunsCommandOptions, output: CommandOutput = processOutput): Promise<number> {
  const runsDirectory = runsDirectoryFor(process.cwd(), process.env, options.runsDir);
  const summaries = await listRuns(runsDirectory);
  if (options.json) {
    output.out(`${JSON.stringify(summaries, null, 2)}\n`);
    return ExitCode.success;
  }
  for (const summary of summaries) {
    for (const warning of summary.warnings) output.error(`warning: run ${summary.id}: ${warning}\n`);
  }
  if (summaries.length === 0) output.error(`no runs in ${runsDirectory}\n`);
  else output.out(`${formatRunTable(summaries)}\n`);
  return ExitCode.success;
}

export async function showRunCommand(id: string, options: ShowRunOptions, output: CommandOutput = processOutput): Promise<number> {
  let run: RunRecord;
  try {
    run = await readRun(runsDirectoryFor(process.cwd(), process.env, options.runsDir), id);
  } catch (error) {
    if (!(error instanceof RunLookupError)) throw error;
    output.error(`manus: ${error.message}\n`);
    return error.exitCode;
  }
  if (options.json) output.out(`${JSON.stringify({ ...run.summary, events: run.events }, null, 2)}\n`);
  else output.out(formatTranscript(run, { full: options.full }));
  return ExitCode.success;
}
