/**
 * A batch's folder, `.manus/batches/<id>/`: `batch.json`, rewritten whole and atomically whenever
 * it changes, and `items.jsonl`, one line per item start and outcome, appended before the batch
 * goes on (and synced to disk), so a killed batch loses no finished item. A later line for an item replaces an
 * earlier one; a line cut off mid-write is skipped.
 */
import { closeSync, existsSync, fsync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { CheckResult } from '../../config/check-types.js';
import type { TokenUsage } from '../../contract/model-types.js';
import { RunLookupError } from '../../runs/run-history.js';

export type BatchStatus = 'running' | 'success' | 'failure' | 'budget-exhausted' | 'interrupted';

export interface BatchBudgets {
  maxCost?: number;
  maxTokens?: number;
  maxTimeSeconds?: number;
  item: { maxSteps?: number; maxTokens?: number; maxCost?: number; maxTimeSeconds?: number };
}

export interface BatchTotals {
  items: number;
  succeeded: number;
  failed: number;
  running: number;
  pending: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cost?: number;
  durationMs: number;
}

/** What a batch needs to be run again by `manus batch resume`: beyond the shared contract, which readers ignore. */
export interface BatchRunSettings {
  /** The folder the batch was started in: the recipe and inputs paths are relative to it. */
  cwd: string;
  /** `--param` values fixed for every item. */
  parameters: Record<string, string>;
  model?: string;
  sandbox?: string;
  retries: number;
  /** The inputs file's content hash: a resumed batch must see the same items. */
  inputsHash: string;
  /** The job ids' session on the queue, the latest, so a resumed batch takes the results of jobs a killed one left. */
  queueSession?: string;
  /** Every session's, oldest first: jobs one killed session took over from an earlier one keep that one's ids. */
  queueSessions?: string[];
  /** Where the batch process runs, so a listing can tell a live batch from a killed one. */
  pid: number;
  host: string;
}

export interface BatchRecord {
  version: 1;
  id: string;
  recipe: { name: string; file: string; hash: string };
  createdAt: string;
  finishedAt?: string;
  inputs: { file: string; count: number };
  concurrency: number;
  queue?: string;
  budgets: BatchBudgets;
  status: BatchStatus;
  exitCode?: number;
  /** Why the batch itself ended in error (its queue refused it, say), apart from its items' outcomes. */
  error?: { code: string; message: string };
  totals: BatchTotals;
  settings: BatchRunSettings;
}

export interface BatchItemRecord {
  index: number;
  parameters: Record<string, string>;
  runId?: string;
  runDirectory?: string;
  status: string;
  exitCode?: number;
  answer?: string;
  structured?: unknown;
  usage: TokenUsage;
  cost?: number;
  durationMs: number;
  startedAt: string;
  attempts: number;
  checks?: CheckResult[];
  worker?: { id: string; host: string; pid: number };
  events?: { stored: 'local' | 'worker'; path: string };
  error?: { code: string; message: string };
}

export interface BatchContents {
  directory: string;
  record: BatchRecord;
  /** The latest line of each item, by index. */
  items: Map<number, BatchItemRecord>;
  warnings: string[];
}

export const batchFileName = 'batch.json';
export const itemsFileName = 'items.jsonl';

export function batchesDirectoryFor(cwd: string, environment: Record<string, string | undefined>, batchesDirectory?: string): string {
  return resolve(cwd, batchesDirectory ?? environment.MANUS_BATCHES_DIR ?? join('.manus', 'batches'));
}

/** The folder of the batch `id` names, exactly or as the unique prefix of one. */
export function resolveBatchDirectory(batchesDirectory: string, id: string): string {
  const names = existsSync(batchesDirectory)
    ? readdirSync(batchesDirectory, { withFileTypes: true }).filter((entry) => entry.isDirectory() && existsSync(join(batchesDirectory, entry.name, batchFileName))).map((entry) => entry.name)
    : [];
  if (names.includes(id)) return join(batchesDirectory, id);
  const matches = names.filter((name) => name.startsWith(id));
  if (matches.length === 1) return join(batchesDirectory, matches[0]);
  if (matches.length === 0) throw new RunLookupError('run_not_found', `unknown batch '${id}': ${names.length === 0 ? `${batchesDirectory} holds no batches` : `no batch in ${batchesDirectory} has an id starting with '${id}'`}`);
  throw new RunLookupError('run_ambiguous', `'${id}' matches ${matches.length} batches (${matches.slice(0, 10).join(', ')}); give more of the id`);
}

export class BatchFolder {
  private itemsDescriptor: number | undefined;
  private syncing = 0;
  private closing = false;

  constructor(readonly directory: string) {}

  /** The folder item runs go in, each in `runs/<run id>/`. */
  get runsDirectory(): string {
    return join(this.directory, 'runs');
  }

  /** A path inside the batch folder relative to it, as the folder records paths; others as they are. */
  relative(path: string): string {
    const inside = relative(this.directory, path);
    return inside.startsWith('..') || isAbsolute(inside) ? path : inside;
  }

  create(record: BatchRecord): void {
    mkdirSync(this.runsDirectory, { recursive: true });
    this.writeRecord(record);
  }

  /** Written to a temporary file and renamed into place: a reader never sees half of it. */
  writeRecord(record: BatchRecord): void {
    const file = join(this.directory, batchFileName);
    const temporary = join(this.directory, `.${batchFileName}.${randomBytes(4).toString('hex')}.tmp`);
    try {
      writeFileSync(temporary, `${JSON.stringify(record, null, 2)}\n`);
      renameSync(temporary, file);
    } catch (error) {
      rmSync(temporary, { force: true });
      throw error;
    }
  }

  /**
   * Appends the item's line before returning, so a killed process loses none; the sync to disk,
   * which a machine's crash needs, runs off the main thread, so that running items do not wait
   * for the disk.
   */
  appendItem(item: BatchItemRecord): void {
    this.itemsDescriptor ??= openSync(join(this.directory, itemsFileName), 'a');
    const descriptor = this.itemsDescriptor;
    const line = Buffer.from(`${JSON.stringify(item)}\n`);
    for (let written = 0; written < line.length;) written += writeSync(descriptor, line, written);
    this.syncing += 1;
    fsync(descriptor, () => {
      this.syncing -= 1;
      if (this.syncing === 0 && this.closing) this.closeNow();
    });
  }

  /** Syncs what is left and closes the items file. */
  close(): void {
    if (this.itemsDescriptor === undefined) return;
    this.closing = true;
    if (this.syncing === 0) this.closeNow();
  }

  private closeNow(): void {
    if (this.itemsDescriptor === undefined) return;
    fsyncSync(this.itemsDescriptor);
    closeSync(this.itemsDescriptor);
    this.itemsDescriptor = undefined;
    this.closing = false;
  }
}

export function readBatchFolder(directory: string): BatchContents {
  const warnings: string[] = [];
  const record = JSON.parse(readFileSync(join(directory, batchFileName), 'utf8')) as BatchRecord;
  const items = new Map<number, BatchItemRecord>();
  const itemsFile = join(directory, itemsFileName);
  if (existsSync(itemsFile)) {
    const lines = readFileSync(itemsFile, 'utf8').split('\n');
    lines.forEach((line, index) => {
      if (line.trim() === '') return;
      try {
        const item = JSON.parse(line) as BatchItemRecord;
        if (typeof item.index === 'number') items.set(item.index, item);
      } catch {
        warnings.push(index === lines.length - 1
          ? `the last line of ${itemsFileName} was cut off (the batch stopped while writing it); it was skipped`
          : `line ${index + 1} of ${itemsFileName} is not valid JSON; it was skipped`);
      }
    });
  }
  return { directory, record, items, warnings };
}

/**
 * Cuts a half-written last line off `items.jsonl`, so that lines appended later start on a line
 * of their own.
 */
export function repairItemsFile(directory: string): void {
  const file = join(directory, itemsFileName);
  if (!existsSync(file)) return;
  const text = readFileSync(file, 'utf8');
  if (text === '' || text.endsWith('\n')) return;
  writeFileSync(file, text.slice(0, text.lastIndexOf('\n') + 1));
}

/** The totals of `count` items from their latest lines. */
export function batchTotals(count: number, items: Iterable<BatchItemRecord>, durationMs: number): BatchTotals {
  const totals: BatchTotals = { items: count, succeeded: 0, failed: 0, running: 0, pending: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0, durationMs: Math.round(durationMs) };
  let cost: number | undefined;
  // One finished item whose model had no known price makes the total unknown, never a sum too low.
  let unknownCost = false;
  for (const item of items) {
    if (item.status === 'success') totals.succeeded += 1;
    else if (item.status === 'running') totals.running += 1;
    else if (item.status !== 'interrupted') totals.failed += 1;
    totals.promptTokens += item.usage.promptTokens;
    totals.completionTokens += item.usage.completionTokens;
    totals.totalTokens += item.usage.totalTokens;
    if (item.cost !== undefined) cost = (cost ?? 0) + item.cost;
    else if (item.usage.totalTokens > 0) unknownCost = true;
  }
  totals.pending = count - totals.succeeded - totals.failed - totals.running;
  if (cost !== undefined && !unknownCost) totals.cost = cost;
  return totals;
}
