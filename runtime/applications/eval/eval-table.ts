/**
 * The eval as text for the terminal: the models × rows table of scores (each cell the row's mean
 * over its repeats, coloured when the terminal takes colour), then each model's summary with its
 * intervals, then the baseline and the gates.
 */
import type { EvalRecord } from './eval-record.js';
import { mean } from './statistics.js';

export function evalTableText(record: EvalRecord, options: { color: boolean }): string {
  const paint = (code: string, text: string) => (options.color ? `\u001b[${code}m${text}\u001b[0m` : text);
  const lines: string[] = [];
  const rowWidth = Math.max(3, ...record.rows.map((row) => row.length));
  const columnWidth = Math.max(7, ...record.models.map((model) => model.length));
  lines.push(`${'row'.padEnd(rowWidth)}  ${record.models.map((model) => model.padStart(columnWidth)).join('  ')}`);
  for (const row of record.rows) {
    const cells = record.models.map((model) => {
      const runs = record.items.filter((item) => item.row === row && item.model === model);
      if (runs.length === 0 || runs.every((run) => run.status === 'not-run')) return paint('2', '-'.padStart(columnWidth));
      const score = mean(runs.map((run) => run.score));
      const passed = runs.filter((run) => run.passed).length;
      const text = (record.repeat > 1 ? `${score.toFixed(2)} ${passed}/${runs.length}` : `${score.toFixed(2)} ${passed === 1 ? 'pass' : 'FAIL'}`).padStart(columnWidth);
      return paint(passed === runs.length ? '32' : passed === 0 ? '31' : '33', text);
    });
    lines.push(`${row.padEnd(rowWidth)}  ${cells.join('  ')}`);
  }
  lines.push('');
  for (const summary of record.summary) {
    const cost = summary.cost === undefined ? 'cost unknown' : `cost ${dollars(summary.cost)}${summary.costPerSuccess !== undefined ? `, ${dollars(summary.costPerSuccess)} per success` : ''}`;
    lines.push(`${summary.model}: mean score ${summary.meanScore.toFixed(3)} [${summary.meanScoreInterval.low.toFixed(3)}, ${summary.meanScoreInterval.high.toFixed(3)}], passed ${summary.passed}/${summary.runs} = ${percent(summary.passRate)} [${percent(summary.passRateInterval.low)}, ${percent(summary.passRateInterval.high)}]`);
    const repeats = record.repeat > 1 ? `any of ${record.repeat} passed (pass@${record.repeat}) ${percent(summary.anyOfKPassed)}, all of ${record.repeat} passed (pass^${record.repeat}) ${percent(summary.allOfKPassed)}; ` : '';
    lines.push(`  ${repeats}${cost}; ${summary.totalTokens} tokens; ${(summary.durationMs / 1000).toFixed(1)} s of runs`);
  }
  if (record.cache) lines.push(`cache: ${record.cache.hits} repl${record.cache.hits === 1 ? 'y' : 'ies'} reused, ${record.cache.misses} asked`);
  for (const gate of record.gates) lines.push(`${gate.passed ? paint('32', 'ok') : paint('31', 'FAILED')} ${gate.gate}: ${gate.message}`);
  return `${lines.join('\n')}\n`;
}

function percent(value: number): string {
  return `${(value * 100).toFixed(1)}%`;
}

/** Dollars with three significant digits below a dollar: eval runs often cost fractions of a cent. */
export function dollars(value: number): string {
  return value >= 1 || value === 0 ? `$${value.toFixed(2)}` : `$${Number(value.toPrecision(3))}`;
}
