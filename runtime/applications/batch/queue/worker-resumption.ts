/**
 * Which earlier run a worker continues a job from, if any. Two sources: a job another worker on
 * this machine had started (its progress names the run's folder), and a run cut short in an
 * earlier session of the batch, whose events the job carries. The first is continued only from a
 * run that a worker started for this very job's item (its start says so), in a copy of the job's
 * own definition; the second only in this worker's own runs folder. Either is continued by one job
 * at a time: a job cannot point a worker at other runs, nor two jobs share one.
 */
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { RunEvent } from '../../../runs/recorded-run.js';
import { continuedRecording } from '../../../runs/run-resumption.js';
import { isInside } from '../../../services/workspace-paths.js';
import { safeRunId, type ItemJobData, type ItemJobProgress } from './queue-protocol.js';

export interface WorkerPlaces {
  runsDirectory: string;
}

/** What a worker records in the start of each run it begins: the job's item, so another worker can tell it is that item's. */
export interface RunJobMarker {
  batch: string;
  index: number;
  definition: string;
}

export function jobMarkerOf(data: ItemJobData): RunJobMarker {
  return { batch: data.batchId, index: data.index, definition: data.definitionHash };
}

export interface ContinuedRun {
  resumeFrom: string;
  resumeCwd: string;
  /** Lets another job continue the run again, once this one has ended. */
  release(): void;
}

/** Decompressed events a job carries are refused past this size. */
const shippedEventsLimitBytes = 256 * 1024 * 1024;

/** A run folder's claims: one file a process, named by its host and pid, while it continues the run. */
const claimPrefix = '.worker-claim-';

/** The run this job continues, claimed for it, or undefined to start the item afresh. */
export function continuedRun(progress: unknown, data: ItemJobData, cwd: string, places: WorkerPlaces): ContinuedRun | undefined {
  const found = takenOverRun(progress, data) ?? shippedRun(data, cwd, places.runsDirectory);
  if (!found) return undefined;
  const release = claim(found.resumeFrom);
  return release ? { ...found, release } : undefined;
}

/** A job another worker on this machine had started, from the run folder its progress names. */
function takenOverRun(progress: unknown, data: ItemJobData): { resumeFrom: string; resumeCwd: string } | undefined {
  const earlier = progress as Partial<ItemJobProgress> | undefined;
  if (typeof earlier?.runDirectory !== 'string' || typeof earlier.cwd !== 'string' || typeof earlier.runId !== 'string') return undefined;
  if (earlier.worker?.host !== hostname() || basename(earlier.runDirectory) !== earlier.runId || !safeRunId.test(earlier.runId)) return undefined;
  if (!isDefinitionFolder(earlier.cwd, data.definitionHash)) return undefined;
  const start = continuableStart(earlier.runDirectory, earlier.runId, earlier.cwd);
  if (!start || !startedForJob(start, jobMarkerOf(data))) return undefined;
  return { resumeFrom: earlier.runDirectory, resumeCwd: earlier.cwd };
}

/**
 * A run whose events the job carries: written into this worker's runs folder under the run's id
 * and continued there, when the events are that run's and name a workspace inside the definition.
 * A folder of that id already here is used only when it holds the same events (this machine ran
 * it): a job cannot read or overwrite other runs.
 */
function shippedRun(data: ItemJobData, cwd: string, runsDirectory: string): { resumeFrom: string; resumeCwd: string } | undefined {
  const shipped = data.resume as Partial<NonNullable<ItemJobData['resume']>> | undefined;
  if (typeof shipped?.runId !== 'string' || !safeRunId.test(shipped.runId) || typeof shipped.events !== 'string') return undefined;
  const folder = join(runsDirectory, shipped.runId);
  const file = join(folder, 'events.jsonl');
  let events: Buffer;
  try {
    events = gunzipSync(Buffer.from(shipped.events, 'base64'), { maxOutputLength: shippedEventsLimitBytes });
  } catch {
    return undefined;
  }
  if (existsSync(folder)) {
    const same = existsSync(file) && readFileSync(file).equals(events) && continuableStart(folder, shipped.runId, cwd) !== undefined;
    return same ? { resumeFrom: folder, resumeCwd: cwd } : undefined;
  }
  mkdirSync(folder, { recursive: true });
  writeFileSync(file, events);
  if (continuableStart(folder, shipped.runId, cwd)) return { resumeFrom: folder, resumeCwd: cwd };
  rmSync(folder, { recursive: true, force: true });
  return undefined;
}

/**
 * The start of the run in `runDirectory`, read once, when the events are run `runId`'s, were cut
 * short, and kept its workspace in a folder inside `cwd`.
 */
function continuableStart(runDirectory: string, runId: string, cwd: string): RunEvent | undefined {
  const start = continuedRecording(runDirectory)?.start;
  if (!start) return undefined;
  const workspace = typeof start.workspace === 'string' && !isAbsolute(start.workspace) ? resolve(cwd, start.workspace) : undefined;
  return start.runId === runId && workspace !== undefined && workspace !== cwd && isInside(cwd, workspace) ? start : undefined;
}

/** Whether a worker began the run with this start for the item `job` names. */
function startedForJob(start: RunEvent, job: RunJobMarker): boolean {
  const marker = start.job as Partial<RunJobMarker> | undefined;
  return marker?.batch === job.batch && marker.index === job.index && marker.definition === job.definition;
}

/** A materialised definition of this hash, as a worker on this machine made it. */
function isDefinitionFolder(folder: string, definitionHash: string): boolean {
  try {
    return basename(folder) === definitionHash.replace(/^sha256:/, '') && readFileSync(join(folder, '.complete'), 'utf8').trim() === definitionHash;
  } catch {
    return false;
  }
}

/**
 * Claims the run folder for this process, or returns undefined when another live claim is there.
 * Each process makes a file of its own, then looks for others: two claiming at once both see the
 * other and both step back (each then starts its item afresh), so two never hold one run. A job of
 * this process holding it already counts as another claim; a dead process's claim does not.
 */
function claim(folder: string): (() => void) | undefined {
  const host = hostname();
  const mine = join(folder, `${claimPrefix}${host}-${process.pid}`);
  try {
    closeSync(openSync(mine, 'wx'));
  } catch {
    // This process holds it (another of its jobs), or the folder cannot take a claim.
    return undefined;
  }
  const release = () => rmSync(mine, { force: true });
  const others = readdirSync(folder).filter((name) => name.startsWith(claimPrefix) && join(folder, name) !== mine);
  const live = others.filter((name) => {
    const [claimHost, pid] = [name.slice(claimPrefix.length, name.lastIndexOf('-')), Number(name.slice(name.lastIndexOf('-') + 1))];
    if (claimHost === host && !isAlive(pid)) {
      rmSync(join(folder, name), { force: true });
      return false;
    }
    return true;
  });
  if (live.length === 0) return release;
  release();
  return undefined;
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
