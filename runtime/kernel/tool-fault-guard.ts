/**
 * Keeps a plugin's stray error from crashing the runtime. A tool that throws from a timer, an
 * event handler or a promise nobody awaits raises an uncaught exception or an unhandled
 * rejection, which would end the process. While a run is in progress, this guard catches them
 * and finds whose they are: each tool call runs inside an AsyncLocalStorage context, which
 * timers, events and promises it creates carry with them, so Node reports the error in the
 * context of the call that scheduled it.
 * - from a call still running: that call fails with the error, as if `execute` had thrown it;
 * - from a call that has ended: a `tool-error-uncaught` warning, and the run goes on;
 * - from no call while calls are running: those calls fail with it;
 * - from no call while none is running: the runtime's own bug, which ends the run as an
 *   internal error (with its run-end event written) instead of the process.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { TraceWriter } from '../contract/tool.js';

interface CallScope {
  callId: string;
  step: number;
  tool: string;
  guard: RunFaultGuard;
  ended: boolean;
  fail(error: unknown): void;
}

const callScopes = new AsyncLocalStorage<CallScope>();
/** Runs in progress in this process; the process handlers are installed while there is one. */
const activeGuards = new Set<RunFaultGuard>();

export class RunFaultGuard {
  private readonly trace: TraceWriter;
  private readonly inFlight = new Set<CallScope>();
  private reportFatal: (error: unknown) => void = () => {};
  /** Rejects with an uncaught error that no tool call can own. */
  readonly fatal: Promise<never>;
  /** The first such error, also when it came after the loop had ended and no one awaited `fatal`. */
  fatalError: unknown;

  constructor(trace: TraceWriter) {
    this.trace = trace;
    this.fatal = new Promise<never>((_resolve, reject) => {
      this.reportFatal = reject;
    });
    // Only observed when it happens; a run that ends normally never awaits it.
    this.fatal.catch(() => undefined);
  }

  /** Starts catching stray errors for this run; `stop` must follow, however the run ends. */
  start(): void {
    if (activeGuards.size === 0) {
      process.on('uncaughtException', onStrayError);
      process.on('unhandledRejection', onStrayError);
    }
    activeGuards.add(this);
  }

  stop(): void {
    activeGuards.delete(this);
    if (activeGuards.size === 0) {
      process.off('uncaughtException', onStrayError);
      process.off('unhandledRejection', onStrayError);
    }
  }

  /**
   * Runs one tool call's `execute` in the call's own context. It settles with what `execute`
   * gives, or fails with the first stray error from anything the call started, whichever is first.
   */
  runCall<T>(call: { id: string; step: number; tool: string }, execute: () => Promise<T>): Promise<T> {
    let fail: (error: unknown) => void = () => {};
    const strayError = new Promise<never>((_resolve, reject) => {
      fail = reject;
    });
    const scope: CallScope = { callId: call.id, step: call.step, tool: call.tool, guard: this, ended: false, fail };
    this.inFlight.add(scope);
    const finished = callScopes.run(scope, execute);
    return Promise.race([finished, strayError]).finally(() => {
      scope.ended = true;
      this.inFlight.delete(scope);
    });
  }

  /** A stray error from a call that has already ended: kept in the record, and the run goes on. */
  recordLateError(scope: CallScope, error: unknown): void {
    this.trace.emit('tool-error-uncaught', {
      step: scope.step,
      callId: scope.callId,
      tool: scope.tool,
      message: error instanceof Error ? error.message : String(error),
      stack: error instanceof Error ? error.stack : undefined,
    });
  }

  get runningCalls(): CallScope[] {
    return [...this.inFlight];
  }

  failRun(error: unknown): void {
    this.fatalError ??= error;
    this.reportFatal(error);
  }
}

/** The tool call whose code is running now (its timers and promises included), if any. */
export function currentToolCall(): { tool: string; callId: string } | undefined {
  const scope = callScopes.getStore();
  return scope ? { tool: scope.tool, callId: scope.callId } : undefined;
}

function onStrayError(error: unknown): void {
  const scope = callScopes.getStore();
  if (scope) {
    if (!scope.ended) scope.fail(error);
    else {
      try {
        scope.guard.recordLateError(scope, error);
      } catch (traceError) {
        // Without its record the run cannot go on; the trace's own error says why.
        scope.guard.failRun(traceError);
      }
    }
    return;
  }
  const running = [...activeGuards].flatMap((guard) => guard.runningCalls);
  if (running.length > 0) {
    for (const call of running) call.fail(error);
    return;
  }
  for (const guard of activeGuards) guard.failRun(error);
}
