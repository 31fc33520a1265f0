/**
 * The run's append-only event log (`events.jsonl`). Each event is one line written synchronously,
 * so a run killed at any point leaves every event before it on disk. Secret values never reach it,
 * nor any listener: events are redacted once, before they are written or handed on.
 * A line that cannot be written whole (a full disk) is cut back off, so the file always ends with
 * a whole event and the run can be resumed; the trace then refuses every later event, which stops
 * the run, since a run must not go on without its record.
 */
import { closeSync, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { ManusError } from '../contract/errors.js';
import type { SecretRedactor } from './secret-redaction.js';
import type { TraceWriter } from '../contract/tool.js';

export type RunEventListener = (type: string, data: Record<string, unknown>) => void;

const runTraceErrorMarker = 'manus.error.RunTraceError';
const runTraceErrorSymbol = Symbol.for(runTraceErrorMarker);

/** The events file (or the recording beside it) could not be written. */
export class RunTraceError extends ManusError {
  private readonly [runTraceErrorSymbol] = true;

  constructor(file: string, cause: unknown) {
    super('run_trace_failed', `cannot write the run's events to ${file}: ${describeWriteFailure(cause)}`, { cause });
  }

  static isInstance(error: unknown): error is RunTraceError {
    return ManusError.hasMarker(error, runTraceErrorMarker);
  }
}

function describeWriteFailure(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOSPC') return 'no space left on device';
  if (code === 'EDQUOT') return 'disk quota exceeded';
  if (code === 'EROFS') return 'the file system is read-only';
  if (code === 'EIO') return 'input/output error';
  return error instanceof Error ? error.message : String(error);
}

/** An append-only file written one whole line at a time. */
class LineFile {
  readonly path: string;
  private readonly descriptor: number;
  private size: number;

  constructor(path: string, flags: 'a' | 'w') {
    this.path = path;
    this.descriptor = openSync(path, flags);
    this.size = fstatSync(this.descriptor).size;
  }

  append(line: string): void {
    const bytes = Buffer.from(line);
    let written = 0;
    try {
      // A full disk may take part of a write before refusing the rest.
      while (written < bytes.length) written += writeSync(this.descriptor, bytes, written);
    } catch (error) {
      if (written > 0) cutBack(this.descriptor, this.size);
      throw new RunTraceError(this.path, error);
    }
    this.size += bytes.length;
  }

  close(): void {
    closeSync(this.descriptor);
  }
}

/** Removes a half-written line; if even that fails, readers of the file skip a last partial line. */
function cutBack(descriptor: number, size: number): void {
  try {
    ftruncateSync(descriptor, size);
  } catch {
    // Nothing more can be done for the file here; the run still stops with the write's error.
  }
}

export class RunTrace implements TraceWriter {
  readonly file: string;
  private readonly events: LineFile;
  private readonly mirror?: LineFile;
  private readonly redactor: SecretRedactor;
  private readonly listeners: RunEventListener[] = [];
  private closed = false;
  /** Set once a line could not be written; every later event is refused with it. */
  failure: RunTraceError | undefined;

  /** `mirrorFile` receives every line too: a self-contained recording of the run. */
  constructor(file: string, redactor: SecretRedactor, mirrorFile?: string) {
    this.file = file;
    this.redactor = redactor;
    this.events = new LineFile(file, 'a');
    if (mirrorFile) this.mirror = new LineFile(mirrorFile, 'w');
  }

  onEvent(listener: RunEventListener): void {
    this.listeners.push(listener);
  }

  emit(type: string, data: Record<string, unknown>): void {
    if (this.failure) throw this.failure;
    const redacted = this.redactor.redactValue(data);
    if (!this.closed) {
      const line = `${JSON.stringify({ type, time: new Date().toISOString(), ...redacted })}\n`;
      try {
        this.events.append(line);
        this.mirror?.append(line);
      } catch (error) {
        this.failure = error as RunTraceError;
        throw error;
      }
    }
    for (const listener of this.listeners) listener(type, redacted);
  }

  redact(text: string): string {
    return this.redactor.redact(text);
  }

  /** Events of one part of the run (a flow's step), each tagged with its path. */
  at(path: string): TraceWriter {
    return { emit: (type, data) => this.emit(type, { path, ...data }), redact: (text) => this.redact(text) };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.events.close();
    this.mirror?.close();
  }
}
