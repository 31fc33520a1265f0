/** A batch as a table on stdout: one row per item, then the totals. */
import type { BatchReport } from '../runtime/applications/reports/batch-report.js';
import { itemInputSummary, itemNumber } from '../runtime/applications/batch/item-number.js';
import { summary } from './batch-progress.js';
import { terminalText } from '../runtime/services/terminal-text.js';

const answerWidth = 60;
const inputWidth = 40;

/** `inputs`, when the batch's inputs are at hand, gives the input of items that have not started. */
export function printBatchTable(report: BatchReport, write: (text: string) => void, inputs: ReadonlyArray<{ index: number; parameters: Record<string, string> }> = []): void {
  const { batch } = report;
  const byIndex = new Map(report.items.map((item) => [item.index, item]));
  const inputByIndex = new Map(inputs.map((input) => [input.index, input.parameters]));
  const rows = Array.from({ length: batch.inputs.count }, (_, index) => {
    const item = byIndex.get(index);
    const input = itemInputSummary(item?.parameters ?? inputByIndex.get(index) ?? {}, inputWidth);
    if (!item) return [String(itemNumber(index)), input, 'pending', '', '', '', '', '', ''];
    return [
      String(itemNumber(index)),
      input,
      item.status,
      item.exitCode === undefined ? '' : String(item.exitCode),
      item.runId ?? '',
      String(item.usage.totalTokens),
      item.cost === undefined ? '' : `$${item.cost.toFixed(4)}`,
      `${(item.durationMs / 1000).toFixed(1)}s`,
      oneLine(item.error && item.status !== 'success' ? item.error.message : item.answer ?? ''),
    ];
  });
  const header = ['#', 'input', 'status', 'exit', 'run', 'tokens', 'cost', 'time', 'answer'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const format = (row: string[]) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join('  ').trimEnd();
  // Answers, errors, ids and the recipe's name come from models, tools and files: shown terminal-safe.
  const print = (text: string) => write(terminalText(text));
  print(`${[format(header), ...rows.map(format)].join('\n')}\n`);
  const exit = batch.exitCode === undefined ? '' : `, exit ${batch.exitCode}`;
  print(`batch ${batch.id} (${batch.recipe.name}): ${batch.status}${exit}; ${summary(batch.totals)}, ${(batch.totals.durationMs / 1000).toFixed(1)} s\n`);
  if (batch.error) print(`the batch stopped: ${batch.error.message}\n`);
}

function oneLine(text: string): string {
  const flat = terminalText(text).replace(/\s+/g, ' ').trim();
  return flat.length <= answerWidth ? flat : `${flat.slice(0, answerWidth - 3)}...`;
}
