/**
 * The run's append-only event log (`events.jsonl`). Each event is one line written synchronously,
 * so a run killed at any point leaves every event before it on disk. Secret values never reach it,
 * nor any listener: events are redacted once, before they are written or handed on.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { SecretRedactor } from './secret-redaction.js';
import type { TraceWriter } from './tool.js';

export type RunEventListener = (type: string, data: Record<string, unknown>) => void;

export class RunTrace implements TraceWriter {
  readonly file: string;
  private readonly descriptor: number;
  private readonly mirror?: number;
  private readonly redactor: SecretRedactor;
  private readonly listeners: RunEventListener[] = [];
  private closed = false;

  /** `mirrorFile` receives every line too: a self-contained recording of the run. */
  constructor(file: string, redactor: SecretRedactor, mirrorFile?: string) {
    this.file = file;
    this.redactor = redactor;
    this.descriptor = openSync(file, 'a');
    if (mirrorFile) this.mirror = openSync(mirrorFile, 'w');
  }

  onEvent(listener: RunEventListener): void {
    this.listeners.push(listener);
  }

  emit(type: string, data: Record<string, unknown>): void {
    const redacted = this.redactor.redactValue(data);
    if (!this.closed) {
      const line = `${JSON.stringify({ type, time: new Date().toISOString(), ...redacted })}\n`;
      writeSync(this.descriptor, line);
      if (this.mirror !== undefined) writeSync(this.mirror, line);
    }
    for (const listener of this.listeners) listener(type, redacted);
  }

  redact(text: string): string {
    return this.redactor.redact(text);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.descriptor);
    if (this.mirror !== undefined) closeSync(this.mirror);
  }
}
