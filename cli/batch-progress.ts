/**
 * A batch's progress on stderr: on a terminal, one line redrawn in place (a bar, items done,
 * failed and running, tokens, cost and the time left) with a line above it for each item that did
 * not succeed; elsewhere (CI logs, --ci) one plain line per item and per notice.
 */
import type { BatchProgressEvent } from '../runtime/applications/batch/batch-run.js';
import type { BatchTotals } from '../runtime/applications/batch/batch-folder.js';
import { itemNumber } from '../runtime/applications/batch/item-number.js';
import { terminalText } from '../runtime/services/terminal-text.js';

export interface BatchProgressOptions {
  write: (text: string) => void;
  /** Redraw one line in place, rather than print a line per item. */
  live: boolean;
  color: boolean;
}

export interface BatchProgressReporter {
  onProgress(event: BatchProgressEvent): void;
  /** Clears the live line before the batch's own output. */
  end(): void;
}

const barWidth = 24;
const redrawIntervalMs = 100;

export function createBatchProgress(options: BatchProgressOptions): BatchProgressReporter {
  const paint = (code: string, text: string) => (options.color ? `\u001b[${code}m${text}\u001b[0m` : text);
  const started = performance.now();
  let shown = false;
  let lastDraw = 0;
  let latest: BatchTotals | undefined;
  let finishedAtStart: number | undefined;
  const clear = () => {
    if (shown) options.write('\r\u001b[K');
    shown = false;
  };
  const draw = (totals: BatchTotals, force = false) => {
    latest = totals;
    const now = performance.now();
    if (!force && now - lastDraw < redrawIntervalMs) return;
    lastDraw = now;
    const done = totals.succeeded + totals.failed;
    const filled = totals.items === 0 ? 0 : Math.round((done / totals.items) * barWidth);
    const bar = `[${'#'.repeat(filled)}${'.'.repeat(barWidth - filled)}]`;
    options.write(`\r\u001b[K${bar} ${summary(totals)}${eta(totals, now)}`);
    shown = true;
  };
  const eta = (totals: BatchTotals, now: number) => {
    const done = totals.succeeded + totals.failed;
    finishedAtStart ??= done;
    const doneHere = done - finishedAtStart;
    const left = totals.items - done;
    if (doneHere === 0 || left === 0) return '';
    return `  ETA ${duration(((now - started) / doneHere) * left)}`;
  };
  const line = (text: string) => {
    clear();
    options.write(`${text}\n`);
    if (options.live && latest) draw(latest, true);
  };
  return {
    onProgress(event) {
      switch (event.kind) {
        case 'item-end': {
          const { item } = event;
          const ok = item.status === 'success';
          if (!options.live || !ok) {
            const label = ok ? paint('32', item.status) : paint('31', item.status);
            const answer = oneLine(item.error?.message ?? item.answer ?? '', 100);
            line(`item ${itemNumber(item.index)}/${event.totals.items} ${label} (exit ${String(item.exitCode)})${item.runId ? ` run ${terminalText(item.runId)}` : ''}, ${(item.durationMs / 1000).toFixed(1)} s, ${item.usage.totalTokens} tokens${answer ? `: ${answer}` : ''}`);
          }
          if (options.live) draw(event.totals, true);
          break;
        }
        case 'item-start':
        case 'run-usage':
          if (options.live) draw(event.totals);
          break;
        case 'notice':
          line(paint('33', terminalText(event.message)));
          break;
        case 'stopping':
          line(paint('33', event.reason === 'interrupted'
            ? 'interrupting: stopping the running items (Ctrl-C again to quit at once); manus batch resume continues the batch'
            : `the batch's ${event.reason} budget ran out: running items stop at their next step, and no more start`));
          break;
      }
    },
    end() {
      if (options.live) clear();
    },
  };
}

export function summary(totals: BatchTotals): string {
  const cost = totals.cost !== undefined ? `  $${totals.cost.toFixed(4)}` : '';
  return `${totals.succeeded + totals.failed}/${totals.items} done  ${totals.failed} failed  ${totals.running} running  ${compactNumber(totals.totalTokens)} tokens${cost}`;
}

function compactNumber(value: number): string {
  if (value >= 1_000_000) return `${(value / 1_000_000).toFixed(1)}M`;
  if (value >= 10_000) return `${(value / 1000).toFixed(1)}k`;
  return String(value);
}

function duration(milliseconds: number): string {
  const seconds = Math.round(milliseconds / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${seconds % 60}s`;
  return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}

function oneLine(text: string, width: number): string {
  const flat = terminalText(text).replace(/\s+/g, ' ').trim();
  return flat.length <= width ? flat : `${flat.slice(0, width - 3)}...`;
}
