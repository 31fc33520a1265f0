/**
 * Reading run folders back (`.manus/runs/<id>/events.jsonl`) for `manus runs`: a summary of each
 * run, and one run's events in full. A run killed mid-write leaves half a line at the end and a
 * damaged file may hold lines that are not JSON; both are skipped with a warning, never fatal.
 * Listing reads only the first event and the end of each file, so long runs list quickly.
 */
import { existsSync } from 'node:fs';
import { open, readdir, readFile, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ManusError } from '../contract/errors.js';
import { isRecord, numberField, recordField, textField } from '../services/event-fields.js';

export interface RunEventRecord {
  type: string;
  time?: string;
  [field: string]: unknown;
}

export interface RunSummary {
  id: string;
  directory: string;
  /** The recipe's name; empty when the run never recorded its start. */
  recipe: string;
  /** How the run ended (its run-end status), or `running`, or `incomplete` when it stopped without saying. */
  status: string;
  exitCode?: number;
  steps: number;
  totalTokens: number;
  /** US dollars, when the model profile has prices. */
  cost?: number;
  /** ISO 8601 time the run started. */
  started?: string;
  /** The time the run was active: a resumed run's parts added up, the gaps between them left out. */
  durationMs?: number;
  model?: string;
  /** Lines that were skipped, and why. */
  warnings: string[];
}

export interface RunRecord {
  summary: RunSummary;
  events: RunEventRecord[];
}

export type RunLookupErrorCode = 'run_not_found' | 'run_ambiguous';

const runLookupErrorMarker = 'manus.error.RunLookupError';
const runLookupErrorSymbol = Symbol.for(runLookupErrorMarker);

/** A run id that names no run, or more than one. */
export class RunLookupError extends ManusError {
  private readonly [runLookupErrorSymbol] = true;
  declare readonly code: RunLookupErrorCode;

  constructor(code: RunLookupErrorCode, message: string) {
    super(code, message);
  }

  static isInstance(error: unknown): error is RunLookupError {
    return ManusError.hasMarker(error, runLookupErrorMarker);
  }
}

export const eventsFileName = 'events.jsonl';

/** How much of a file's end is read first when listing; widened when the last line is longer. */
const tailWindowBytes = 256 * 1024;
const listedAmbiguousMatches = 10;

/** Every run folder's summary, newest first. A missing runs folder has no runs. */
export async function listRuns(runsDirectory: string): Promise<RunSummary[]> {
  const summaries: RunSummary[] = [];
  for (const id of await runFolderNames(runsDirectory)) {
    const directory = join(runsDirectory, id);
    const { events, warnings } = await readEventWindow(join(directory, eventsFileName));
    summaries.push(summarize(id, directory, events, warnings));
  }
  return summaries.sort(newestFirst);
}

/** One run's summary and all its events. `id` may be a prefix of the folder name when only one run has it. */
export async function readRun(runsDirectory: string, id: string): Promise<RunRecord> {
  const folder = await resolveRunId(runsDirectory, id);
  const directory = join(runsDirectory, folder);
  const text = await readFile(join(directory, eventsFileName), 'utf8');
  const { events, warnings } = parseEventLines(text, { numbered: true });
  return { summary: summarize(folder, directory, events, warnings), events };
}

/** The folder name of the run `id` names, exactly or as the unique prefix of one. */
export async function resolveRunId(runsDirectory: string, id: string): Promise<string> {
  if (id === '') throw new RunLookupError('run_not_found', 'no run id was given');
  const names = await runFolderNames(runsDirectory);
  if (names.includes(id)) return id;
  const matches = names.filter((name) => name.startsWith(id));
  if (matches.length === 1) return matches[0];
  if (matches.length === 0) {
    const where = names.length === 0 ? `${runsDirectory} holds no runs` : `no run in ${runsDirectory} has an id starting with '${id}'`;
    throw new RunLookupError('run_not_found', `unknown run '${id}': ${where}`);
  }
  const listed = matches.slice(0, listedAmbiguousMatches).join(', ');
  const more = matches.length > listedAmbiguousMatches ? `, and ${matches.length - listedAmbiguousMatches} more` : '';
  throw new RunLookupError('run_ambiguous', `'${id}' matches ${matches.length} runs (${listed}${more}); give more of the id`);
}

/** Folders that hold an events file, newest id first (ids start with their UTC time). */
async function runFolderNames(runsDirectory: string): Promise<string[]> {
  const entries = await readdir(runsDirectory, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  return entries
    .filter((entry) => entry.isDirectory() && existsSync(join(runsDirectory, entry.name, eventsFileName)))
    .map((entry) => entry.name)
    .sort()
    .reverse();
}

interface ParsedEvents {
  events: RunEventRecord[];
  warnings: string[];
}

/**
 * Splits events text into events. Without `numbered` the text is a window into a larger file, so
 * warnings cannot name line numbers.
 */
export function parseEventLines(text: string, options: { numbered: boolean }): ParsedEvents {
  const events: RunEventRecord[] = [];
  const warnings: string[] = [];
  const lines = text.split('\n');
  const last = lines.pop() ?? '';
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    const event = parseEvent(line);
    if (event) events.push(event);
    else warnings.push(options.numbered ? `line ${index + 1} of ${eventsFileName} is not a valid event; it was skipped` : `a line of ${eventsFileName} that is not a valid event was skipped`);
  });
  if (last.trim() !== '') {
    const event = parseEvent(last);
    // A complete event merely missing its line break is still an event.
    if (event) events.push(event);
    else warnings.push(`the last line of ${eventsFileName} was cut off (the run stopped while writing it); it was skipped`);
  }
  return { events, warnings };
}

function parseEvent(line: string): RunEventRecord | undefined {
  try {
    const value: unknown = JSON.parse(line);
    if (isRecord(value) && typeof value.type === 'string') return value as RunEventRecord;
  } catch {
    // Reported by the caller as a skipped line.
  }
  return undefined;
}

/** The first event and the events at the end of the file: all a summary needs. */
async function readEventWindow(file: string): Promise<ParsedEvents> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    if (size <= tailWindowBytes) return parseEventLines(await handle.readFile('utf8'), { numbered: true });
    const tail = await readLastLines(handle, size);
    if (tail.wholeFile) return parseEventLines(tail.text, { numbered: true });
    const first = parseEventLines(`${await readFirstLine(handle, size)}\n`, { numbered: true });
    const rest = parseEventLines(tail.text, { numbered: false });
    return { events: [...first.events, ...rest.events], warnings: [...first.warnings, ...rest.warnings] };
  } finally {
    await handle.close();
  }
}

async function readFirstLine(handle: FileHandle, size: number): Promise<string> {
  const chunks: Buffer[] = [];
  for (let position = 0; position < size; position += tailWindowBytes) {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(tailWindowBytes), 0, tailWindowBytes, position);
    const chunk = buffer.subarray(0, bytesRead);
    const lineBreak = chunk.indexOf(0x0a);
    if (lineBreak >= 0) {
      chunks.push(chunk.subarray(0, lineBreak));
      break;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Whole lines from the end of the file. The window starts one byte early so that a line starting
 * exactly at its edge is recognised as whole, and widens until it holds at least one line.
 */
async function readLastLines(handle: FileHandle, size: number): Promise<{ text: string; wholeFile: boolean }> {
  for (let window = tailWindowBytes; ; window *= 4) {
    const start = Math.max(0, size - window - 1);
    const length = size - start;
    const { buffer } = await handle.read(Buffer.alloc(length), 0, length, start);
    if (start === 0) return { text: buffer.toString('utf8'), wholeFile: true };
    const lineBreak = buffer.indexOf(0x0a);
    const whole = lineBreak >= 0 ? buffer.subarray(lineBreak + 1) : Buffer.alloc(0);
    if (whole.includes(0x0a)) return { text: whole.toString('utf8'), wholeFile: false };
  }
}

export function summarize(id: string, directory: string, events: RunEventRecord[], warnings: string[]): RunSummary {
  const start = events.find((event) => event.type === 'run-start');
  const end = finalEnd(events);
  const started = textField(start?.time) ?? textField(events[0]?.time);
  const usage = recordField(end?.usage) ?? recordField(findLast(events, (event) => event.type === 'step-end' && isRecord(event.usage))?.usage);
  return {
    id,
    directory,
    recipe: textField(recordField(start?.recipe)?.name) ?? '',
    status: end ? textField(end.status) ?? 'unknown' : stillRunning(events) ? 'running' : 'incomplete',
    exitCode: numberField(end?.exitCode),
    steps: numberField(end?.steps) ?? events.reduce((highest, event) => Math.max(highest, numberField(event.step) ?? 0), 0),
    totalTokens: numberField(usage?.totalTokens) ?? 0,
    cost: numberField(end?.cost),
    started,
    durationMs: activeDurationMs(events),
    model: textField(recordField(start?.model)?.model),
    warnings,
  };
}

/**
 * The run's active time: each part (from run-start or run-resume to its run-end) counts its own
 * recorded duration, or the time to its last event when it stopped without an end. A run-resume
 * carries what the parts before it came to (`earlierDurationMs`), so a listing that reads only the
 * end of a long file still adds up the whole run.
 */
export function activeDurationMs(events: readonly RunEventRecord[]): number | undefined {
  let total: number | undefined;
  let partEnd: RunEventRecord | undefined;
  let lastTime: string | undefined;
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index];
    lastTime ??= textField(event.time);
    if (event.type === 'run-end' && partEnd === undefined) partEnd = event;
    if (event.type !== 'run-start' && event.type !== 'run-resume') continue;
    const part = numberField(partEnd?.durationMs) ?? elapsed(textField(event.time), lastTime);
    if (part !== undefined) total = (total ?? 0) + part;
    const earlier = numberField(event.earlierDurationMs);
    if (earlier !== undefined) return (total ?? 0) + earlier;
    partEnd = undefined;
    lastTime = undefined;
  }
  return total ?? elapsed(textField(events[0]?.time), textField(events[events.length - 1]?.time));
}

/** The last run-end, unless the run was resumed after it. */
function finalEnd(events: RunEventRecord[]): RunEventRecord | undefined {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const { type } = events[index];
    if (type === 'run-end') return events[index];
    if (type === 'run-start' || type === 'run-resume') return undefined;
  }
  return undefined;
}

/**
 * A run without an end is running only if its start recorded a process id (`pid`, and `host`
 * when the runs folder is shared) and that process is alive; otherwise it stopped without saying.
 */
function stillRunning(events: RunEventRecord[]): boolean {
  const latest = findLast(events, (event) => event.type === 'run-start' || event.type === 'run-resume');
  const pid = numberField(latest?.pid);
  return pid !== undefined && processIsAlive(pid, typeof latest?.host === 'string' ? latest.host : undefined);
}

/** Whether the process `pid` on `host` (this machine when not given) is alive; on another machine it cannot be told, and counts as gone. */
export function processIsAlive(pid: number, host?: string): boolean {
  if (host !== undefined && host !== hostname()) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function newestFirst(left: RunSummary, right: RunSummary): number {
  const byStart = (right.started ?? '').localeCompare(left.started ?? '');
  return byStart !== 0 ? byStart : right.id.localeCompare(left.id);
}

function elapsed(from: string | undefined, to: string | undefined): number | undefined {
  if (from === undefined || to === undefined) return undefined;
  const milliseconds = Date.parse(to) - Date.parse(from);
  return Number.isFinite(milliseconds) ? Math.max(0, milliseconds) : undefined;
}

function findLast<T>(items: readonly T[], predicate: (item: T) => boolean): T | undefined {
  for (let index = items.length - 1; index >= 0; index -= 1) if (predicate(items[index])) return items[index];
  return undefined;
}
