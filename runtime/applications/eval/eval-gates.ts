/**
 * The gates CI sets on an eval: a least mean score (for every model, or per model), and no model
 * worse than its baseline by more than the paired interval allows. Each gate says what it found;
 * the command turns a failed gate into exit 1.
 */
import { UsageError } from '../../contract/errors.js';
import type { BaselineComparison, GateResult, ModelSummary } from './eval-record.js';

export interface MinimumScores {
  /** For every model without one of its own. */
  all?: number;
  models: Map<string, number>;
}

/** `0.8`, or `model=0.8,other=0.7`, or both: `0.8,cheap=0.6`. */
export function parseMinimumScores(text: string): MinimumScores {
  const result: MinimumScores = { models: new Map() };
  for (const part of text.split(',').map((each) => each.trim()).filter(Boolean)) {
    const separator = part.lastIndexOf('=');
    const value = Number(separator >= 0 ? part.slice(separator + 1) : part);
    if (!Number.isFinite(value) || value < 0 || value > 1) throw new UsageError(`--min-score expects scores from 0 to 1, as 0.8 or model=0.8; got '${part}'`);
    if (separator >= 0) result.models.set(part.slice(0, separator), value);
    else result.all = value;
  }
  return result;
}

export function evaluateGates(summaries: readonly ModelSummary[], options: { minimum?: MinimumScores; baseline?: BaselineComparison }): GateResult[] {
  const gates: GateResult[] = [];
  const { minimum, baseline } = options;
  if (minimum) {
    for (const name of minimum.models.keys()) {
      if (!summaries.some((summary) => summary.model === name)) throw new UsageError(`--min-score names the model '${name}', which the eval does not run (it runs ${summaries.map((summary) => summary.model).join(', ')})`);
    }
    for (const summary of summaries) {
      const least = minimum.models.get(summary.model) ?? minimum.all;
      if (least === undefined) continue;
      const passed = summary.meanScore >= least;
      gates.push({ gate: 'min-score', passed, message: `${summary.model}: mean score ${summary.meanScore.toFixed(3)} ${passed ? 'is at least' : 'is below'} ${least}` });
    }
  }
  if (baseline) {
    if (baseline.models.length === 0) gates.push({ gate: 'baseline', passed: true, message: `no model of this eval is in the baseline ${baseline.file}; nothing to compare` });
    for (const entry of baseline.models) {
      const { comparison } = entry;
      const interval = `[${signed(comparison.interval.low)}, ${signed(comparison.interval.high)}]`;
      gates.push(comparison.worse
        ? { gate: 'baseline', passed: false, message: `${entry.model}: mean score fell from ${entry.baselineMean.toFixed(3)} to ${entry.currentMean.toFixed(3)} (difference ${signed(comparison.difference)}, 95% interval ${interval}, wholly below 0); worse rows: ${entry.worseRows.join(', ')}` }
        : { gate: 'baseline', passed: true, message: `${entry.model}: mean score ${entry.baselineMean.toFixed(3)} -> ${entry.currentMean.toFixed(3)} (difference ${signed(comparison.difference)}, 95% interval ${interval}): within what chance explains${entry.worseRows.length > 0 ? `; rows lower: ${entry.worseRows.join(', ')}` : ''}` });
    }
  }
  return gates;
}

function signed(value: number): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(3)}`;
}
