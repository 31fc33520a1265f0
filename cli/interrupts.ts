/**
 * Ctrl-C and SIGTERM for a command that runs agents: the first Ctrl-C stops them in an orderly
 * way (the run or batch closes and can be resumed), a second quits at once; SIGTERM gets the
 * orderly stop, but never one that outlasts a supervisor's patience. Exit 130 either way.
 */
import { InterruptedError } from '../runtime/contract/errors.js';
import { ExitCode } from './exit-codes.js';

export interface InterruptWatch {
  signal: AbortSignal;
  /** Stops listening for the signals. */
  dispose(): void;
}

const terminateGraceMilliseconds = 2500;

export function watchInterrupts(firstInterruptMessage?: string): InterruptWatch {
  const interrupt = new AbortController();
  let interrupts = 0;
  const onInterrupt = () => {
    interrupts += 1;
    // A second Ctrl-C means "now": skip the orderly shutdown.
    if (interrupts > 1) process.exit(ExitCode.interrupted);
    if (firstInterruptMessage) process.stderr.write(`\n${firstInterruptMessage}\n`);
    interrupt.abort(new InterruptedError());
  };
  const onTerminate = () => {
    setTimeout(() => process.exit(ExitCode.interrupted), terminateGraceMilliseconds).unref();
    interrupt.abort(new InterruptedError('terminated'));
  };
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onTerminate);
  return {
    signal: interrupt.signal,
    dispose() {
      process.off('SIGINT', onInterrupt);
      process.off('SIGTERM', onTerminate);
    },
  };
}
