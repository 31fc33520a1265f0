/**
 * `eval.json`, the eval's results: every run's scores, each model's summary with its intervals,
 * the baseline comparison and the gates. It names the eval and its models but holds no setting
 * that could carry a secret, and its answers are redacted as the batch recorded them. The same
 * file is the next eval's baseline.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../../contract/errors.js';
import type { BatchItemRecord } from '../batch/batch-folder.js';
import type { EvalDefinition } from './eval-file.js';
import { modelLabel, type EvalMatrix } from './eval-matrix.js';
import type { ScorerResult } from './scorers.js';
import { bootstrapMeanInterval, mean, pairedComparison, wilsonInterval, type Interval, type PairedComparison } from './statistics.js';

export const evalRecordFileName = 'eval.json';

export interface EvalItemResult {
  index: number;
  row: string;
  model: string;
  /** From 1, as tables show it. */
  repeat: number;
  status: string;
  runId?: string;
  /** Relative to the eval's folder. */
  runDirectory?: string;
  answer?: string;
  scores: ScorerResult[];
  score: number;
  passed: boolean;
  cost?: number;
  totalTokens: number;
  durationMs: number;
  error?: { code: string; message: string };
}

export interface ModelSummary {
  model: string;
  runs: number;
  passed: number;
  passRate: number;
  /** Wilson score interval, 95%. */
  passRateInterval: Interval;
  /** The mean over rows of each row's mean score over its repeats. */
  meanScore: number;
  /** Percentile bootstrap over rows, 95%. */
  meanScoreInterval: Interval;
  /** pass@k with exactly k samples: the share of rows where any of k passed. */
  anyOfKPassed: number;
  /** pass^k: the share of rows where all k passed. */
  allOfKPassed: number;
  cost?: number;
  /** Cost divided by the runs that passed. */
  costPerSuccess?: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  durationMs: number;
}

export interface BaselineComparison {
  file: string;
  models: Array<{ model: string; comparison: PairedComparison; baselineMean: number; currentMean: number; worseRows: string[]; betterRows: string[] }>;
}

export interface GateResult {
  gate: string;
  passed: boolean;
  message: string;
}

export interface EvalRecord {
  version: 1;
  id: string;
  name: string;
  file: string;
  recipe: string;
  models: string[];
  repeat: number;
  rows: string[];
  scorers: Array<{ name: string; type: string; threshold: number; weight: number }>;
  createdAt: string;
  finishedAt?: string;
  status: string;
  exitCode?: number;
  /** Where the runs' folders are, relative to this file's folder, when not in it (a replayed recording). */
  runsFrom?: string;
  cache?: { hits: number; misses: number };
  items: EvalItemResult[];
  summary: ModelSummary[];
  baseline?: BaselineComparison;
  gates: GateResult[];
}

export interface ScoredItem {
  record?: BatchItemRecord;
  scores: ScorerResult[];
  score: number;
  passed: boolean;
}

export function evalItemResults(matrix: EvalMatrix, scored: Map<number, ScoredItem>): EvalItemResult[] {
  return matrix.cells.map((cell) => {
    const item = scored.get(cell.index);
    const record = item?.record;
    return {
      index: cell.index,
      row: cell.row,
      model: modelLabel(cell.model),
      repeat: cell.repeat + 1,
      status: record?.status ?? 'not-run',
      ...(record?.runId ? { runId: record.runId } : {}),
      ...(record?.runDirectory ? { runDirectory: record.runDirectory } : {}),
      ...(record?.answer !== undefined ? { answer: record.answer.length > 2000 ? `${record.answer.slice(0, 2000)}...` : record.answer } : {}),
      scores: item?.scores ?? [],
      score: item?.score ?? 0,
      passed: item?.passed ?? false,
      ...(record?.cost !== undefined ? { cost: record.cost } : {}),
      totalTokens: record?.usage.totalTokens ?? 0,
      durationMs: record?.durationMs ?? 0,
      ...(record?.error ? { error: record.error } : {}),
    };
  });
}

export function modelSummaries(matrix: EvalMatrix, items: EvalItemResult[], records: Map<number, BatchItemRecord>): ModelSummary[] {
  return matrix.models.map((model) => {
    const label = modelLabel(model);
    const own = items.filter((item) => item.model === label);
    const byRow = groupBy(own, (item) => item.row);
    const rowMeans = [...byRow.values()].map((runs) => mean(runs.map((run) => run.score)));
    const passed = own.filter((item) => item.passed).length;
    const ownRecords = own.map((item) => records.get(item.index)).filter((record): record is BatchItemRecord => record !== undefined);
    const unknownCost = ownRecords.some((record) => record.cost === undefined && record.usage.totalTokens > 0);
    const cost = unknownCost || ownRecords.length === 0 ? undefined : ownRecords.reduce((sum, record) => sum + (record.cost ?? 0), 0);
    return {
      model: label,
      runs: own.length,
      passed,
      passRate: own.length === 0 ? 0 : passed / own.length,
      passRateInterval: wilsonInterval(passed, own.length),
      meanScore: mean(rowMeans),
      meanScoreInterval: bootstrapMeanInterval(rowMeans),
      anyOfKPassed: byRow.size === 0 ? 0 : [...byRow.values()].filter((runs) => runs.some((run) => run.passed)).length / byRow.size,
      allOfKPassed: byRow.size === 0 ? 0 : [...byRow.values()].filter((runs) => runs.every((run) => run.passed)).length / byRow.size,
      ...(cost !== undefined ? { cost, ...(passed > 0 ? { costPerSuccess: cost / passed } : {}) } : {}),
      promptTokens: ownRecords.reduce((sum, record) => sum + record.usage.promptTokens, 0),
      completionTokens: ownRecords.reduce((sum, record) => sum + record.usage.completionTokens, 0),
      totalTokens: ownRecords.reduce((sum, record) => sum + record.usage.totalTokens, 0),
      durationMs: ownRecords.reduce((sum, record) => sum + record.durationMs, 0),
    };
  });
}

/** Each model's rows compared with the same model's rows in the baseline (or its only model, when it had one). */
export function compareWithBaseline(file: string, baseline: EvalRecord, current: EvalItemResult[], models: string[]): BaselineComparison {
  const rowScores = (items: EvalItemResult[], model: string) => {
    const byRow = groupBy(items.filter((item) => item.model === model), (item) => item.row);
    return new Map([...byRow].map(([row, runs]) => [row, { score: mean(runs.map((run) => run.score)), passed: runs.every((run) => run.passed) }]));
  };
  return {
    file,
    models: models.flatMap((model) => {
      const baselineModel = baseline.models.includes(model) ? model : baseline.models.length === 1 ? baseline.models[0] : undefined;
      if (baselineModel === undefined) return [];
      const before = rowScores(baseline.items, baselineModel);
      const now = rowScores(current, model);
      const pairs = [...now].flatMap(([row, value]) => {
        const old = before.get(row);
        return old ? [{ row, current: value.score, baseline: old.score, currentPassed: value.passed, baselinePassed: old.passed }] : [];
      });
      return [{
        model,
        comparison: pairedComparison(pairs),
        baselineMean: mean(pairs.map((pair) => pair.baseline)),
        currentMean: mean(pairs.map((pair) => pair.current)),
        worseRows: pairs.filter((pair) => pair.current < pair.baseline).map((pair) => pair.row),
        betterRows: pairs.filter((pair) => pair.current > pair.baseline).map((pair) => pair.row),
      }];
    }),
  };
}

export function readEvalRecord(file: string): EvalRecord {
  let record: EvalRecord;
  try {
    record = JSON.parse(readFileSync(file, 'utf8')) as EvalRecord;
  } catch (error) {
    throw new UsageError(`cannot read the eval results ${file}: ${(error as Error).message}`);
  }
  if (record?.version !== 1 || !Array.isArray(record.items) || !Array.isArray(record.models)) throw new UsageError(`${file} is not an eval.json written by manus eval`);
  return record;
}

/** The latest line of each run in a recorded eval's items.jsonl (a recording needs no batch.json). */
export function readRecordedItems(directory: string): Map<number, BatchItemRecord> {
  const items = new Map<number, BatchItemRecord>();
  const file = join(directory, 'items.jsonl');
  if (!existsSync(file)) return items;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      const item = JSON.parse(line) as BatchItemRecord;
      if (typeof item.index === 'number') items.set(item.index, item);
    } catch {
      // A line cut off by a kill: the run shows as not run.
    }
  }
  return items;
}

export function evalDefinitionSummary(definition: EvalDefinition): Pick<EvalRecord, 'name' | 'recipe' | 'rows' | 'scorers'> {
  return {
    name: definition.name,
    recipe: definition.recipe,
    rows: definition.rows.map((row) => row.id),
    scorers: definition.scorers.map((scorer) => ({ name: scorer.name, type: scorer.type, threshold: scorer.threshold, weight: scorer.weight })),
  };
}

function groupBy<T>(values: readonly T[], key: (value: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const value of values) {
    const name = key(value);
    const group = groups.get(name);
    if (group) group.push(value);
    else groups.set(name, [value]);
  }
  return groups;
}
