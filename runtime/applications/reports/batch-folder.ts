/**
 * Reading a batch folder (`.manus/batches/<id>/`): `batch.json`, rewritten whole as the batch goes,
 * and `items.jsonl`, one line per item outcome, where a later line for an index replaces an
 * earlier one. A batch still running has no end yet, and its last line may be cut off mid-write
 * (skipped); unknown fields are ignored and a wrong one reads as missing.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import type { BatchTotals as RecordedTotals } from '../batch/batch-folder.js';
import { isRecord, numberField, recordField, textField } from '../../services/event-fields.js';
import { checkList, type CheckView } from './run-view.js';

export const batchFileName = 'batch.json';
export const batchItemsFileName = 'items.jsonl';

/** The totals as `manus batch` writes them; a batch still running, or an older one, may lack its duration. */
export type BatchTotals = Omit<RecordedTotals, 'durationMs'> & { durationMs?: number };

export interface BatchItem {
  index: number;
  parameters: Record<string, unknown>;
  runId?: string;
  /** Absolute when the item's events are here; as the worker gave it otherwise. */
  runDirectory?: string;
  status: string;
  exitCode?: number;
  answer: string;
  totalTokens: number;
  cost?: number;
  durationMs?: number;
  startedAt?: string;
  attempts?: number;
  checks: CheckView[];
  worker?: { id?: string; host?: string; pid?: number };
  /** Where the item's events are: here (`local`, an absolute path) or on a worker (its path there). */
  events?: { stored: 'local' | 'worker'; path: string };
  error?: { code: string; message: string };
}

export interface BatchRecord {
  id: string;
  directory: string;
  recipe: { name: string; file?: string };
  createdAt?: string;
  finishedAt?: string;
  inputs?: { file?: string; count?: number };
  concurrency?: number;
  queue?: string;
  /** The folder the batch ran in: its items' recorded workspaces are relative to it. */
  cwd?: string;
  budgets: Record<string, unknown>;
  status: string;
  exitCode?: number;
  totals: BatchTotals;
  items: BatchItem[];
  warnings: string[];
}

export async function readBatchFolder(directory: string): Promise<BatchRecord> {
  const folder = resolve(directory);
  const warnings: string[] = [];
  const batch = recordField(JSON.parse(await readFile(join(folder, batchFileName), 'utf8'))) ?? {};
  const items = await readItems(folder, warnings);
  const recipe = recordField(batch.recipe);
  const inputs = recordField(batch.inputs);
  return {
    id: textField(batch.id) ?? folder.split(/[\\/]/).at(-1) ?? '',
    directory: folder,
    recipe: { name: textField(recipe?.name) ?? '', file: textField(recipe?.file) },
    createdAt: textField(batch.createdAt),
    finishedAt: textField(batch.finishedAt),
    inputs: inputs && { file: textField(inputs.file), count: numberField(inputs.count) },
    concurrency: numberField(batch.concurrency),
    queue: textField(batch.queue),
    cwd: textField(recordField(batch.settings)?.cwd),
    budgets: recordField(batch.budgets) ?? {},
    status: textField(batch.status) ?? 'unknown',
    exitCode: numberField(batch.exitCode),
    totals: totalsOf(recordField(batch.totals), items),
    items,
    warnings,
  };
}

async function readItems(folder: string, warnings: string[]): Promise<BatchItem[]> {
  const file = join(folder, batchItemsFileName);
  if (!existsSync(file)) return [];
  const lines = (await readFile(file, 'utf8')).split('\n');
  const byIndex = new Map<number, BatchItem>();
  lines.forEach((line, number) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      warnings.push(number === lines.length - 1 ? `the last line of ${batchItemsFileName} was cut off; it was skipped` : `line ${number + 1} of ${batchItemsFileName} is not JSON; it was skipped`);
      return;
    }
    const item = isRecord(value) ? itemOf(value, folder) : undefined;
    if (item) byIndex.set(item.index, item);
    else warnings.push(`line ${number + 1} of ${batchItemsFileName} is not an item; it was skipped`);
  });
  return [...byIndex.values()].sort((first, second) => first.index - second.index);
}

function itemOf(value: Record<string, unknown>, folder: string): BatchItem | undefined {
  const index = numberField(value.index);
  if (index === undefined || !Number.isInteger(index) || index < 0) return undefined;
  const events = recordField(value.events);
  const stored = events?.stored === 'worker' ? 'worker' : 'local';
  const runDirectory = textField(value.runDirectory);
  const local = (path: string) => (isAbsolute(path) ? path : resolve(folder, path));
  const eventsPath = textField(events?.path);
  const error = recordField(value.error);
  const worker = recordField(value.worker);
  return {
    index,
    parameters: recordField(value.parameters) ?? {},
    runId: textField(value.runId),
    runDirectory: runDirectory && stored === 'local' ? local(runDirectory) : runDirectory,
    status: textField(value.status) ?? 'unknown',
    exitCode: numberField(value.exitCode),
    answer: textField(value.answer) ?? '',
    totalTokens: numberField(recordField(value.usage)?.totalTokens) ?? 0,
    cost: numberField(value.cost),
    durationMs: numberField(value.durationMs),
    startedAt: textField(value.startedAt),
    attempts: numberField(value.attempts),
    checks: Array.isArray(value.checks) ? checkList(value.checks) : [],
    worker: worker && { id: textField(worker.id), host: textField(worker.host), pid: numberField(worker.pid) },
    events: eventsPath ? { stored, path: stored === 'local' ? local(eventsPath) : eventsPath } : runDirectory && stored === 'local' ? { stored, path: join(local(runDirectory), 'events.jsonl') } : undefined,
    error: error && { code: textField(error.code) ?? '', message: textField(error.message) ?? '' },
  };
}

/** The totals batch.json gives, else what the items add up to. */
function totalsOf(recorded: Record<string, unknown> | undefined, items: readonly BatchItem[]): BatchTotals {
  const succeeded = items.filter((item) => item.status === 'success').length;
  const costs = items.map((item) => item.cost).filter((cost): cost is number => cost !== undefined);
  const read = (name: string, fallback: number) => numberField(recorded?.[name]) ?? fallback;
  return {
    items: read('items', items.length),
    succeeded: read('succeeded', succeeded),
    failed: read('failed', items.length - succeeded),
    running: read('running', 0),
    pending: read('pending', 0),
    promptTokens: read('promptTokens', 0),
    completionTokens: read('completionTokens', 0),
    totalTokens: read('totalTokens', items.reduce((sum, item) => sum + item.totalTokens, 0)),
    cost: numberField(recorded?.cost) ?? (costs.length > 0 ? costs.reduce((sum, cost) => sum + cost, 0) : undefined),
    durationMs: numberField(recorded?.durationMs),
  };
}

/** Folders in `batchesDirectory` that hold a batch.json, newest id first. */
export async function batchFolderNames(batchesDirectory: string): Promise<string[]> {
  const entries = await readdir(batchesDirectory, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  return entries
    .filter((entry) => entry.isDirectory() && existsSync(join(batchesDirectory, entry.name, batchFileName)))
    .map((entry) => entry.name)
    .sort()
    .reverse();
}
