/**
 * Output that may be closed under us: `manus run ... | head -2` closes the pipe after two lines.
 * Printing then stops, never the run: a closed stream's error marks it closed and later writes to
 * it are dropped, so the run still finishes, writes its events and reports and exits with its code.
 */

export function dropWritesAfterClose(streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    let closed = false;
    // Any error on an output stream (EPIPE, EIO when a terminal goes away) means no one reads it any more.
    stream.on('error', () => {
      closed = true;
    });
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((...args: unknown[]) => {
      if (!closed && !stream.destroyed) return write(...args);
      const callback = args.find((argument) => typeof argument === 'function') as (() => void) | undefined;
      if (callback) queueMicrotask(callback);
      return true;
    }) as NodeJS.WriteStream['write'];
  }
}
