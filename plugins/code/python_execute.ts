/**
 * Runs Python in the run's sandbox with the workspace as working folder. Reports output, exit
 * status and the files the code created or changed. `fresh` mode (the default) starts a new
 * interpreter per call; `persistent` mode keeps one per run, so variables and imports carry
 * over between calls like notebook cells.
 */
import { randomBytes } from 'node:crypto';
import {
  compareSnapshots,
  defineTool,
  limitOutput,
  OutputFile,
  protectedPathNotice,
  savedOutputLimitBytes,
  SentinelSession,
  snapshotWorkspace,
  ToolError,
} from 'manus-runtime';
import type { Sandbox, SandboxCommandResult, ToolContext, ToolResult, WorkspaceChanges } from 'manus-runtime';
import { encodePythonRequest, pythonDriverCommand } from './python-driver.js';
import { checkPython } from './python-doctor.js';
import { pythonInterpreter, pythonVariable } from './python-interpreter.js';


interface PythonSettings {
  mode: 'fresh' | 'persistent';
  maximumOutput: number;
  python: string;
  savedOutputLimit: number;
}

/** Where each stream's full output goes as it arrives. */
interface OutputFiles {
  stdout: OutputFile;
  stderr: OutputFile;
}

/** What one call produced, whichever mode ran it. */
interface PythonOutcome extends Pick<SandboxCommandResult, 'stdout' | 'stderr' | 'exitCode' | 'signal' | 'timedOut' | 'aborted'> {
  /** Persistent mode: the interpreter ended, taking the state of earlier calls with it. */
  stateLost: boolean;
}

const defaultTimeoutSeconds = 60;
const maximumTimeoutSeconds = 600;
const defaultMaximumOutput = 16_000;
const sessionResourceKey = 'python_execute.session';
/** Unbuffered output survives a kill; no __pycache__ folders appear among the created files; plots render without a display. */
const pythonEnvironment = { PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1', MPLBACKEND: 'Agg' };

export default defineTool({
  name: 'python_execute',
  permissionArguments: { code: 'text' },
  description: 'Run Python 3 in the workspace; returns what it printed and the files it changed. print() what you need to see; save outputs in the workspace.',
  parameters: {
    type: 'object',
    properties: {
      code: { type: 'string' },
      timeout: { type: 'number', exclusiveMinimum: 0, maximum: maximumTimeoutSeconds, default: defaultTimeoutSeconds, description: 'Seconds.' },
    },
    required: ['code'],
  },
  // A call's files are found by comparing the workspace before and after it, so no other command
  // may change the workspace meanwhile: calls in this group never overlap.
  sequential: 'workspace-commands',
  doctor: (settings, context) => checkPython(settings.python, context),
  async execute(input, context) {
    const sandbox = await context.sandbox();
    const settings = readSettings(context.settings, sandbox.kind);
    const timeoutMs = (input.timeout ?? defaultTimeoutSeconds) * 1000;
    const files = outputFiles(settings, context);
    try {
      const before = await snapshotWorkspace(context.workspace);
      const outcome =
        settings.mode === 'persistent'
          ? await runPersistent(input.code, timeoutMs, sandbox, settings, files, context)
          : await runFresh(input.code, timeoutMs, sandbox, settings, files, context);
      const changes = compareSnapshots(before, await snapshotWorkspace(context.workspace));
      return await report(outcome, changes, { ...settings, timeoutMs, sandboxKind: sandbox.kind }, files, context);
    } finally {
      files.stdout.discard();
      files.stderr.discard();
    }
  },
});

function readSettings(settings: Record<string, unknown>, sandboxKind: Sandbox['kind']): PythonSettings {
  const mode = settings.mode ?? 'fresh';
  if (mode !== 'fresh' && mode !== 'persistent') {
    throw new ToolError(`tool_settings.python_execute.mode must be "fresh" or "persistent", not ${JSON.stringify(mode)}.`, 'settings_invalid');
  }
  const maximumOutput = settings.max_output ?? defaultMaximumOutput;
  if (typeof maximumOutput !== 'number' || !Number.isInteger(maximumOutput) || maximumOutput <= 0) {
    throw new ToolError('tool_settings.python_execute.max_output must be a positive integer.', 'settings_invalid');
  }
  const python = pythonInterpreter(settings.python, process.env, sandboxKind);
  if (typeof python !== 'string' || python.trim() === '') {
    throw new ToolError(`tool_settings.python_execute.python (or ${pythonVariable}) must name a Python interpreter.`, 'settings_invalid');
  }
  return { mode, maximumOutput, python, savedOutputLimit: savedOutputLimitBytes(settings, 'python_execute') };
}

function outputFiles(settings: PythonSettings, context: ToolContext): OutputFiles {
  const file = (stream: string) =>
    new OutputFile({
      runDirectory: context.runDirectory,
      label: `python_execute-${stream}`,
      limitBytes: settings.savedOutputLimit,
      setting: 'tool_settings.python_execute.saved_output_limit_mb',
    });
  return { stdout: file('stdout'), stderr: file('stderr') };
}

async function runFresh(
  code: string,
  timeoutMs: number,
  sandbox: Sandbox,
  settings: PythonSettings,
  files: OutputFiles,
  context: ToolContext,
): Promise<PythonOutcome> {
  const result = await sandbox.run(pythonDriverCommand(settings.python, 'fresh'), {
    stdin: encodePythonRequest('-', code),
    timeoutMs,
    signal: context.signal,
    env: pythonEnvironment,
    outputSinks: files,
  });
  return { ...result, stateLost: false };
}

async function runPersistent(
  code: string,
  timeoutMs: number,
  sandbox: Sandbox,
  settings: PythonSettings,
  files: OutputFiles,
  context: ToolContext,
): Promise<PythonOutcome> {
  const session = await interpreterFor(sandbox, settings, context);
  await sandbox.refreshWorkspaceAccess();
  const marker = `__manus_cell_done_${randomBytes(12).toString('hex')}__`;
  const result = await session.exchange(encodePythonRequest(marker, code), marker, {
    timeoutMs,
    signal: context.signal,
    markedStreams: ['stdout', 'stderr'],
    outputSinks: files,
  });
  if (result.exit) await context.resources.release(sessionResourceKey);
  // Gives back ownership of what the cell wrote and checks the protected paths; a change to one stops the run.
  await sandbox.afterCommand();
  return {
    stdout: result.stdout,
    stderr: result.stderr,
    exitCode: result.exit ? result.exit.exitCode : (result.status ?? null),
    signal: result.exit?.signal ?? null,
    timedOut: result.timedOut,
    aborted: result.aborted,
    stateLost: result.exit !== undefined,
  };
}

/** The run's interpreter; one that has ended is replaced. */
async function interpreterFor(sandbox: Sandbox, settings: PythonSettings, context: ToolContext): Promise<SentinelSession> {
  const start = async () =>
    new SentinelSession(await sandbox.spawnSession(pythonDriverCommand(settings.python, 'persistent'), { env: pythonEnvironment }));
  const existing = await context.resources.get(sessionResourceKey, start, (session) => session.kill());
  if (existing.running) return existing;
  await context.resources.release(sessionResourceKey);
  return context.resources.get(sessionResourceKey, start, (session) => session.kill());
}

async function report(
  outcome: PythonOutcome,
  changes: WorkspaceChanges,
  settings: PythonSettings & { timeoutMs: number; sandboxKind: Sandbox['kind'] },
  files: OutputFiles,
  context: ToolContext,
): Promise<ToolResult> {
  const [stdoutLimit, stderrLimit] = shareLimit(settings.maximumOutput, outcome.stdout.length, outcome.stderr.length);
  const limitedStdout = await limitOutput(outcome.stdout, { limit: stdoutLimit, runDirectory: context.runDirectory, label: 'python_execute-stdout', file: files.stdout });
  const limitedStderr = await limitOutput(outcome.stderr, { limit: stderrLimit, runDirectory: context.runDirectory, label: 'python_execute-stderr', file: files.stderr });
  const stdout = limitedStdout.text;
  const stderr = limitedStderr.text;
  const notices = [limitedStdout.notice, limitedStderr.notice].filter((notice): notice is string => notice !== undefined);
  const sections: string[] = [];
  if (stdout) sections.push(stdout.replace(/\n$/, ''));
  if (stderr) sections.push(`[stderr]\n${stderr.replace(/\n$/, '')}`);
  if (!stdout && !stderr) sections.push('(no output)');
  sections.push(statusLine(outcome, settings));
  const notice = protectedPathNotice(context.protectedPaths, context.workspace, `${stdout}\n${stderr}`);
  if (notice) sections.push(notice);
  if (changes.created.length > 0) sections.push(`Files created: ${changes.created.join(', ')}`);
  if (changes.modified.length > 0) sections.push(`Files modified: ${changes.modified.join(', ')}`);
  if (changes.deleted.length > 0) sections.push(`Files deleted: ${changes.deleted.join(', ')}`);
  const failed = outcome.timedOut || outcome.aborted || outcome.signal !== null || outcome.exitCode !== 0;
  return {
    content: sections.join('\n'),
    isError: failed,
    files: [...changes.created, ...changes.modified],
    savedOutputNotice: notices.length > 0 ? notices.join('; ') : undefined,
  };
}

function statusLine(outcome: PythonOutcome, settings: { timeoutMs: number; mode: string; sandboxKind: string }): string {
  const lost = settings.mode === 'persistent' && outcome.stateLost
    ? ' The interpreter was stopped: variables, imports and other state from earlier calls are lost; the next call starts a fresh interpreter.'
    : '';
  if (outcome.timedOut) {
    return `[Timed out after ${settings.timeoutMs / 1000} s: the code and every process it started were killed; the output above is what it printed until then.${lost}]`;
  }
  if (outcome.aborted) return `[Interrupted: the code and every process it started were killed.${lost}]`;
  if (outcome.signal) {
    const memory = outcome.signal === 'SIGKILL' && settings.sandboxKind !== 'host' ? ' (the sandbox memory limit may have been reached)' : '';
    return `[Killed by ${outcome.signal}${memory}.${lost}]`;
  }
  if (outcome.stateLost) return `[The interpreter exited with status ${outcome.exitCode}.${lost}]`;
  return `[Exit status ${outcome.exitCode}]`;
}

/** Splits the output budget: a short stream keeps all it needs, a long one takes the rest. */
function shareLimit(total: number, stdoutLength: number, stderrLength: number): [number, number] {
  if (stdoutLength + stderrLength <= total) return [total, total];
  const half = Math.floor(total / 2);
  if (stderrLength <= half) return [total - stderrLength, stderrLength];
  if (stdoutLength <= half) return [stdoutLength, total - stdoutLength];
  return [half, total - half];
}
