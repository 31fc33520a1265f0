/**
 * Scores every run of an eval from what it left: its outcome line, its events and its workspace.
 * Runs are scored a few at once (judges wait on a model); built-in scorers take well under a
 * millisecond a run, so scoring a recorded eval again is quick and needs no model.
 */
import { resolve } from 'node:path';
import type { BatchItemRecord } from '../batch/batch-folder.js';
import type { EvalDefinition } from './eval-file.js';
import type { EvalMatrix } from './eval-matrix.js';
import type { ScoredItem } from './eval-record.js';
import { readRunFacts, workspaceFileReader } from './run-facts.js';
import { itemScore, scoreRun, type JudgeScorer } from './scorers.js';

export interface ScoreItemsInput {
  definition: EvalDefinition;
  matrix: EvalMatrix;
  records: ReadonlyMap<number, BatchItemRecord>;
  /** The folder the records' run directories are relative to. */
  runsBase: string;
  /** The folder the runs were started in: their workspace paths are relative to it. */
  cwd: string;
  judge?: JudgeScorer;
  concurrency?: number;
}

export async function scoreItems(input: ScoreItemsInput): Promise<Map<number, ScoredItem>> {
  const scored = new Map<number, ScoredItem>();
  const cells = [...input.matrix.cells];
  const lane = async () => {
    for (let cell = cells.shift(); cell; cell = cells.shift()) {
      const record = input.records.get(cell.index);
      if (!record || record.status === 'running') {
        scored.set(cell.index, { ...(record ? { record } : {}), scores: [], score: 0, passed: false });
        continue;
      }
      const row = input.matrix.rows[cell.rowIndex];
      const runDirectory = record.runDirectory ? resolve(input.runsBase, record.runDirectory) : undefined;
      const facts = readRunFacts(runDirectory, input.cwd);
      const results = await scoreRun(input.definition.scorers, {
        answer: record.answer ?? '',
        ...(record.structured !== undefined ? { structured: record.structured } : {}),
        status: record.status,
        parameters: row.parameters,
        expected: row.expected,
        toolCalls: facts.toolCalls,
        steps: facts.steps,
        ...(record.cost !== undefined ? { cost: record.cost } : {}),
        totalTokens: record.usage.totalTokens,
        readFile: workspaceFileReader(facts.workspace),
        checks: record.checks ?? [],
      }, input.judge);
      scored.set(cell.index, { record, scores: results, ...itemScore(input.definition.scorers, results) });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, input.concurrency ?? 8) }, lane));
  return scored;
}
