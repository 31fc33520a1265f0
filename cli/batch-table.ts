/** A batch as a table on stdout: one row per item, then the totals. */
import type { BatchReport } from '../runtime/applications/reports/batch-report.js';
import { summary } from './batch-progress.js';

const answerWidth = 60;

export function printBatchTable(report: BatchReport, write: (text: string) => void): void {
  const { batch } = report;
  const byIndex = new Map(report.items.map((item) => [item.index, item]));
  const rows = Array.from({ length: batch.inputs.count }, (_, index) => {
    const item = byIndex.get(index);
    if (!item) return [String(index), 'pending', '', '', '', '', '', ''];
    return [
      String(index),
      item.status,
      item.exitCode === undefined ? '' : String(item.exitCode),
      item.runId ?? '',
      String(item.usage.totalTokens),
      item.cost === undefined ? '' : `$${item.cost.toFixed(4)}`,
      `${(item.durationMs / 1000).toFixed(1)}s`,
      oneLine(item.error && item.status !== 'success' ? item.error.message : item.answer ?? ''),
    ];
  });
  const header = ['#', 'status', 'exit', 'run', 'tokens', 'cost', 'time', 'answer'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const format = (row: string[]) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join('  ').trimEnd();
  write(`${[format(header), ...rows.map(format)].join('\n')}\n`);
  const exit = batch.exitCode === undefined ? '' : `, exit ${batch.exitCode}`;
  write(`batch ${batch.id} (${batch.recipe.name}): ${batch.status}${exit}; ${summary(batch.totals)}, ${(batch.totals.durationMs / 1000).toFixed(1)} s\n`);
  if (batch.error) write(`the batch stopped: ${batch.error.message}\n`);
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= answerWidth ? flat : `${flat.slice(0, answerWidth - 3)}...`;
}
