/**
 * A bash session per run, in the run's sandbox: the working folder, variables and background
 * jobs carry over between calls, as in a terminal. A non-zero exit status is reported, not
 * treated as a failure; a timeout kills the session and everything it started, and the next
 * call gets a fresh shell.
 */
import { randomBytes } from 'node:crypto';
import { decodeExitStatus, defineTool, limitOutput, OutputFile, protectedPathNotice, savedOutputLimitBytes, SentinelSession, ToolError } from 'manus-runtime';
import type { Sandbox, SentinelExchangeResult, ToolContext, ToolResult } from 'manus-runtime';


const defaultTimeoutSeconds = 120;
const maximumTimeoutSeconds = 3600;
const defaultMaximumOutput = 16_000;
const sessionResourceKey = 'bash.session';
/** Partial output of Python scripts survives a timeout. */
const sessionEnvironment = { PYTHONUNBUFFERED: '1' };
/** Pipelines end their first commands with SIGPIPE in normal use (`yes | head`). */
const ordinarySignals = new Set<NodeJS.Signals>(['SIGPIPE']);

export default defineTool({
  name: 'bash',
  permissionArguments: { command: 'command' },
  description: [
    'Run a bash command in a persistent shell session, with the workspace as the starting folder.',
    'The working folder, environment variables and background jobs carry over between calls.',
    'Standard error is merged into the output. Commands get no input: use non-interactive flags (apt-get -y,',
    'pip --no-input). Run long-lived programs in the background with output redirected to a file',
    '(`server > server.log 2>&1 &`). A command still running after `timeout` seconds is killed together with',
    'the shell; the next call starts a fresh shell. Set restart to true to start a fresh shell.',
  ].join(' '),
  parameters: {
    type: 'object',
    properties: {
      command: { type: 'string', description: 'The bash command to run. May span several lines.' },
      timeout: {
        type: 'number',
        exclusiveMinimum: 0,
        maximum: maximumTimeoutSeconds,
        description: `Seconds before the command is stopped. Default ${defaultTimeoutSeconds}.`,
      },
      restart: { type: 'boolean', description: 'Start a fresh shell before running the command.' },
    },
    required: ['command'],
  },
  // Runs apart from other workspace commands, so the files python_execute reports are its own.
  sequential: 'workspace-commands',
  async execute(input, context) {
    const maximumOutput = readMaximumOutput(context.settings);
    const savedLimit = savedOutputLimitBytes(context.settings, 'bash');
    if (input.restart) await context.resources.release(sessionResourceKey);
    if (input.command.trim() === '') {
      if (input.restart) return 'Started a fresh shell.';
      throw new ToolError('The command is empty.', 'command_empty');
    }
    const timeoutMs = (input.timeout ?? defaultTimeoutSeconds) * 1000;
    const sandbox = await context.sandbox();
    const session = await shellFor(sandbox, context);
    await sandbox.refreshWorkspaceAccess();
    const marker = `__manus_command_done_${randomBytes(12).toString('hex')}__`;
    // Standard error is merged into standard output; the file takes both in the order they come.
    const file = new OutputFile({ runDirectory: context.runDirectory, label: 'bash', limitBytes: savedLimit, setting: 'tool_settings.bash.saved_output_limit_mb' });
    // With an allowlist, each connection the proxy refused during the command is named after its output.
    const watch = context.network.egress?.watchCommand(input.command);
    try {
      const result = await session.exchange(commandScript(input.command, marker), marker, {
        timeoutMs,
        signal: context.signal,
        markedStreams: ['stdout'],
        outputSinks: { stdout: file, stderr: file },
      });
      if (result.exit) await context.resources.release(sessionResourceKey);
      // Gives back ownership of what the command wrote and checks the protected paths; a change to one stops the run.
      await sandbox.afterCommand();
      const refusals = [...new Set((watch?.refusals() ?? []).map((refusal) => `manus: ${refusal.message}`))];
      return await report(result, timeoutMs, maximumOutput, file, context, refusals);
    } finally {
      watch?.end();
      file.discard();
    }
  },
});

function readMaximumOutput(settings: Record<string, unknown>): number {
  const value = settings.max_output ?? defaultMaximumOutput;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new ToolError('tool_settings.bash.max_output must be a positive integer.', 'settings_invalid');
  }
  return value;
}

/** The run's shell; one that has ended is replaced. */
async function shellFor(sandbox: Sandbox, context: ToolContext): Promise<SentinelSession> {
  const start = async () =>
    new SentinelSession(await sandbox.spawnSession(['bash', '--noprofile', '--norc'], { env: sessionEnvironment }));
  const existing = await context.resources.get(sessionResourceKey, start, (session) => session.kill());
  if (existing.running) return existing;
  await context.resources.release(sessionResourceKey);
  return context.resources.get(sessionResourceKey, start, (session) => session.kill());
}

/**
 * The command travels as one single-quoted word for `eval`, so an unbalanced quote or a syntax
 * error in it cannot swallow the marker line that follows. Its input is /dev/null, so a command
 * that reads input cannot consume the session's next request.
 */
function commandScript(command: string, marker: string): string {
  const quoted = `'${command.replaceAll("'", `'\\''`)}'`;
  return [
    `eval ${quoted} < /dev/null 2>&1`,
    `__manus_status=$?; printf '\\n%s %d\\n' '${marker}' "$__manus_status"; unset __manus_status`,
    '',
  ].join('\n');
}

async function report(
  result: SentinelExchangeResult,
  timeoutMs: number,
  maximumOutput: number,
  file: OutputFile,
  context: ToolContext,
  refusalLines: readonly string[],
): Promise<ToolResult> {
  const output = Buffer.concat([result.stdout, result.stderr]);
  const limited = await limitOutput(output, { limit: maximumOutput, runDirectory: context.runDirectory, label: 'bash', file });
  const text = limited.text.replace(/\n$/, '');
  const { line, isError } = statusLine(result, timeoutMs);
  const notice = protectedPathNotice(context.protectedPaths, context.workspace, text);
  const status = [line, ...refusalLines, ...(notice ? [notice] : [])].join('\n');
  return { content: text ? `${text}\n${status}` : `(no output)\n${status}`, isError, savedOutputNotice: limited.notice };
}

function statusLine(result: SentinelExchangeResult, timeoutMs: number): { line: string; isError: boolean } {
  const fresh = 'the next call starts a fresh shell (working folder, variables and background jobs are gone)';
  if (result.timedOut) {
    return {
      line: `[Timed out after ${timeoutMs / 1000} s: the shell and every process it started were killed; ${fresh}. The output above is what the command printed until then.]`,
      isError: true,
    };
  }
  if (result.aborted) return { line: `[Interrupted: the shell and every process it started were killed; ${fresh}.]`, isError: true };
  if (result.exit) {
    const how = result.exit.signal ? `was killed by ${result.exit.signal}` : `exited with status ${result.exit.exitCode}`;
    return { line: `[The shell ${how}; ${fresh}.]`, isError: result.exit.signal !== null };
  }
  const status = result.status ?? -1;
  const { signal } = decodeExitStatus(status);
  if (signal) return { line: `[Exit status ${status}: killed by ${signal}]`, isError: !ordinarySignals.has(signal) };
  return { line: `[Exit status ${status}]`, isError: false };
}
