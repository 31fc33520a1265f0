/**
 * Follows a growing events file from a byte offset: every poll reads what was appended, hands on
 * the whole lines and keeps a line still being written until its end arrives. Polling, not file
 * watching: it behaves the same on every file system, network ones included.
 */
import { open } from 'node:fs/promises';
import { parseEventLines, type RunEventRecord } from '../../runs/run-history.js';

export interface EventsFollower {
  stop(): void;
}

export function followEvents(file: string, offset: number, onEvents: (events: RunEventRecord[]) => void, pollMilliseconds: number): EventsFollower {
  let position = offset;
  let pending = Buffer.alloc(0);
  let reading = false;
  let stopped = false;
  const poll = async () => {
    if (reading || stopped) return;
    reading = true;
    try {
      const handle = await open(file, 'r');
      try {
        const { size } = await handle.stat();
        if (size <= position) return;
        const { buffer, bytesRead } = await handle.read(Buffer.alloc(size - position), 0, size - position, position);
        position += bytesRead;
        const text = Buffer.concat([pending, buffer.subarray(0, bytesRead)]);
        const lineEnd = text.lastIndexOf(0x0a);
        pending = lineEnd < 0 ? text : text.subarray(lineEnd + 1);
        if (lineEnd < 0) return;
        const { events } = parseEventLines(text.subarray(0, lineEnd + 1).toString('utf8'), { numbered: false });
        if (events.length > 0 && !stopped) onEvents(events);
      } finally {
        await handle.close();
      }
    } catch {
      // A file briefly unreadable (being replaced) is read again at the next poll.
    } finally {
      reading = false;
    }
  };
  const timer = setInterval(() => void poll(), pollMilliseconds);
  void poll();
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}

/** The events text up to its last whole line, and that line's end as a byte offset. */
export function wholeLines(text: Buffer): { text: string; offset: number } {
  const lineEnd = text.lastIndexOf(0x0a);
  return { text: text.subarray(0, lineEnd + 1).toString('utf8'), offset: lineEnd + 1 };
}
