/**
 * Runs host processes, each in its own process group (`detached: true`), so that a timeout, an
 * abort or the end of a command kills the whole group with one signal: the process, its
 * children, and background jobs it left behind. Shared by the host and bwrap sandboxes; the host
 * sandbox adds a PID namespace for the processes that leave their group (host-containment.ts).
 */
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { BoundedOutput, defaultOutputLimitBytes, type OutputSink } from '../../contract/bounded-output.js';
import { decodeExitStatus } from './exit-status.js';
import { SandboxError } from './sandbox-errors.js';
import type { SandboxCommandResult, SandboxSession, SessionExit } from '../../contract/sandbox-types.js';

export interface ProcessGroupCommandOptions {
  cwd: string;
  env: Record<string, string>;
  stdin?: string | Buffer;
  timeoutMs: number;
  signal?: AbortSignal;
  outputLimitBytes?: number;
  outputSinks?: { stdout?: OutputSink; stderr?: OutputSink };
  /** True when the program reports a signalled child as status 128 + N (bwrap does). */
  statusEncodesSignal?: boolean;
  /** Called with the group's id once the process has started, before anything is awaited. */
  onStart?: (processGroup: number) => void;
}

export type ProcessGroupSessionOptions = Pick<ProcessGroupCommandOptions, 'cwd' | 'env' | 'statusEncodesSignal' | 'onStart'>;

/** How long to wait for output pipes to close after the group was killed; a process that left the group may hold them. */
const pipeCloseGraceMs = 1000;

/** The status a shell reports for a command it cannot start. */
const commandNotFoundStatus = 127;

export function killProcessGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch (error) {
    // ESRCH: the group is already gone, which is the goal.
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

export class ProcessGroups {
  private readonly live = new Set<ChildProcess>();

  async run(argv: string[], options: ProcessGroupCommandOptions): Promise<SandboxCommandResult> {
    const started = performance.now();
    const limit = options.outputLimitBytes ?? defaultOutputLimitBytes;
    const stdout = new BoundedOutput(limit, options.outputSinks?.stdout);
    const stderr = new BoundedOutput(limit, options.outputSinks?.stderr);
    const child = startProcessGroup(argv, options);
    this.live.add(child);
    child.stdout.on('data', (chunk: Buffer) => stdout.write(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.write(chunk));
    child.stdin.end(options.stdin ?? '');

    let timedOut = false;
    let aborted = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killProcessGroup(child.pid);
    }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      killProcessGroup(child.pid);
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });

    try {
      const ending = await waitForExit(child);
      // Whatever the command started and left running ends with it.
      killProcessGroup(child.pid);
      await waitForPipes(child);
      const exit =
        'spawnError' in ending
          ? recordSpawnFailure(argv[0], ending.spawnError, stderr)
          : normalise(ending, options.statusEncodesSignal);
      return {
        stdout: stdout.toBuffer(),
        stderr: stderr.toBuffer(),
        ...exit,
        timedOut,
        aborted,
        durationMs: Math.round(performance.now() - started),
        omittedBytes: { stdout: stdout.omittedBytes, stderr: stderr.omittedBytes },
      };
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      this.live.delete(child);
    }
  }

  async spawnSession(argv: string[], options: ProcessGroupSessionOptions): Promise<SandboxSession> {
    const child = startProcessGroup(argv, options);
    const spawnError = await new Promise<Error | undefined>((resolve) => {
      child.once('spawn', () => resolve(undefined));
      child.once('error', resolve);
    });
    if (spawnError) throw new SandboxError('sandbox_failed', `Could not start ${argv[0]}: ${spawnError.message}`);
    this.live.add(child);
    let running = true;
    const exited = waitForExit(child).then((ending): SessionExit => {
      running = false;
      killProcessGroup(child.pid);
      this.live.delete(child);
      return 'spawnError' in ending ? { exitCode: commandNotFoundStatus, signal: null } : normalise(ending, options.statusEncodesSignal);
    });
    return {
      stdin: child.stdin,
      stdout: child.stdout,
      stderr: child.stderr,
      exited,
      get running() {
        return running;
      },
      async kill() {
        killProcessGroup(child.pid);
        await exited;
      },
    };
  }

  /** Kills every group still running; used when the sandbox is disposed. */
  async killAll(): Promise<void> {
    // A child without a pid never started, so it has no exit to wait for.
    const children = [...this.live].filter((child) => child.pid !== undefined);
    for (const child of children) killProcessGroup(child.pid);
    await Promise.all(children.map((child) => waitForExit(child)));
  }
}

function startProcessGroup(argv: string[], options: ProcessGroupSessionOptions): ChildProcessWithoutNullStreams {
  const child = spawn(argv[0], argv.slice(1), {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: 'pipe',
  });
  // Failures are read from 'exit' and 'spawn'; a stray 'error' must not crash the runtime.
  child.on('error', () => {});
  // A command that exits without reading its input closes the pipe under us; that is not a failure.
  child.stdin.on('error', () => {});
  if (child.pid !== undefined) options.onStart?.(child.pid);
  return child;
}

type Ending = { code: number | null; signal: NodeJS.Signals | null } | { spawnError: Error };

function waitForExit(child: ChildProcess): Promise<Ending> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve({ code: child.exitCode, signal: child.signalCode });
      return;
    }
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => {
      if (child.pid === undefined) resolve({ spawnError: error });
    });
  });
}

async function waitForPipes(child: ChildProcess): Promise<void> {
  const closed = new Promise<void>((resolve) => {
    if (child.stdout?.closed !== false && child.stderr?.closed !== false) resolve();
    child.once('close', () => resolve());
  });
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve();
    }, pipeCloseGraceMs);
  });
  await Promise.race([closed, grace]);
  clearTimeout(timer);
}

function normalise(ending: { code: number | null; signal: NodeJS.Signals | null }, statusEncodesSignal = false): SessionExit {
  if (ending.code !== null && statusEncodesSignal) return decodeExitStatus(ending.code);
  return { exitCode: ending.code, signal: ending.signal };
}

function recordSpawnFailure(program: string, error: Error, stderr: BoundedOutput): SessionExit {
  stderr.write(Buffer.from(`${program}: ${error.message}\n`));
  return { exitCode: commandNotFoundStatus, signal: null };
}
