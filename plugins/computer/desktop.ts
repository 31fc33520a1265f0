/**
 * A virtual desktop in the run's sandbox: Xvfb, a window manager and the programs the settings
 * name, all started from one long-lived shell session of the sandbox, which each action talks
 * to. Killing the session kills the desktop with everything on it.
 */
import { randomBytes } from 'node:crypto';
import { SentinelSession, ToolError } from 'manus-runtime';
import type { Sandbox } from 'manus-runtime';
import { desktopStartScript, desktopStopScript, shellWord, type DesktopStart } from './desktop-script.js';

const startTimeoutMs = 30_000;
const stopTimeoutMs = 5_000;
const screenshotTimeoutMs = 15_000;
/** Room for a base64 screenshot of a busy 4K screen. */
const sessionOutputLimitBytes = 64 * 1024 * 1024;

export interface DesktopCommandResult {
  output: string;
  status: number | undefined;
}

export class Desktop {
  private constructor(
    private readonly session: SentinelSession,
    readonly display: string,
    readonly width: number,
    readonly height: number,
  ) {}

  static async start(sandbox: Sandbox, start: DesktopStart, signal?: AbortSignal): Promise<Desktop> {
    const session = new SentinelSession(await sandbox.spawnSession(['bash', '--noprofile', '--norc']), sessionOutputLimitBytes);
    try {
      const { output, status } = await exchange(session, desktopStartScript(start), startTimeoutMs, signal);
      const display = /^display (:\d+)$/m.exec(output)?.[1];
      if (status !== 0 || !display) {
        const reason = output.trim() || `the start script ended with status ${status ?? 'unknown'}`;
        const code = status === 127 ? 'desktop_programs_missing' : 'desktop_start_failed';
        const fix = status === 127 ? ' Install them where the sandbox runs (run `manus doctor` to see how).' : '';
        throw new ToolError(`The virtual desktop did not start in the ${sandbox.kind} sandbox: ${reason}.${fix}`, code);
      }
      return new Desktop(session, display, start.width, start.height);
    } catch (error) {
      await session.kill();
      throw error;
    }
  }

  get running(): boolean {
    return this.session.running;
  }

  /** Runs one shell command line in the desktop's session, with DISPLAY and the cookie set. */
  run(command: string, timeoutMs: number, signal?: AbortSignal): Promise<DesktopCommandResult> {
    return exchange(this.session, command, timeoutMs, signal);
  }

  /** The whole screen as PNG bytes, read from the X server. */
  async screenshot(signal?: AbortSignal): Promise<Buffer> {
    const { output, status } = await this.run('import -silent -window root png:- | base64 -w0', screenshotTimeoutMs, signal);
    const png = Buffer.from(output.trim(), 'base64');
    if (status !== 0 || png.subarray(1, 4).toString('latin1') !== 'PNG') {
      throw new ToolError(`The screenshot failed: ${output.trim().slice(0, 500) || `status ${status}`}`, 'screenshot_failed');
    }
    return png;
  }

  async stop(): Promise<void> {
    if (this.session.running) await exchange(this.session, desktopStopScript, stopTimeoutMs).catch(() => undefined);
    await this.session.kill();
  }
}

/**
 * The command travels as one quoted word for `eval`, as the bash tool sends its commands, so a
 * quote in it cannot swallow the marker line; its input is /dev/null.
 */
async function exchange(session: SentinelSession, command: string, timeoutMs: number, signal?: AbortSignal): Promise<DesktopCommandResult> {
  const marker = `__manus_desktop_done_${randomBytes(12).toString('hex')}__`;
  const script = [
    `eval ${shellWord(command)} < /dev/null 2>&1`,
    `__manus_status=$?; printf '\\n%s %d\\n' '${marker}' "$__manus_status"; unset __manus_status`,
    '',
  ].join('\n');
  const result = await session.exchange(script, marker, { timeoutMs, signal, markedStreams: ['stdout'] });
  const output = Buffer.concat([result.stdout, result.stderr]).toString('utf8');
  if (result.timedOut) throw new ToolError(`The desktop did not answer within ${timeoutMs / 1000} s; it was stopped and the next action starts a fresh one.`, 'desktop_timeout');
  if (result.aborted) throw new ToolError('Interrupted: the desktop was stopped.', 'interrupted');
  if (result.exit) throw new ToolError(`The desktop's session ended (${output.trim().slice(-500) || 'no output'}); the next action starts a fresh desktop.`, 'desktop_ended');
  return { output, status: result.status };
}
