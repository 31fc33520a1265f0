/**
 * The run's append-only event log (`events.jsonl`). Each event is one line written synchronously,
 * so a run killed at any point leaves every event before it on disk. Secret values never reach it.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { TraceWriter } from './tool.js';

export type RunEventListener = (type: string, data: Record<string, unknown>) => void;

const secretNamePattern = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH/i;
const redacted = '[redacted]';

/** Values worth hiding: every variable named as a key source, and any variable that looks like a secret. */
export function collectSecrets(environment: Record<string, string | undefined>, namedVariables: Iterable<string>): string[] {
  const secrets = new Set<string>();
  for (const name of namedVariables) {
    const value = environment[name];
    if (value && value.length >= 6) secrets.add(value);
  }
  for (const [name, value] of Object.entries(environment)) {
    if (value && value.length >= 8 && secretNamePattern.test(name)) secrets.add(value);
  }
  // Longer first, so a secret containing another is hidden whole.
  return [...secrets].sort((left, right) => right.length - left.length);
}

export function redactSecrets(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (result.includes(secret)) result = result.split(secret).join(redacted);
  }
  return result;
}

export class RunTrace implements TraceWriter {
  readonly file: string;
  private readonly descriptor: number;
  private readonly mirror?: number;
  private readonly secrets: readonly string[];
  private readonly listeners: RunEventListener[] = [];
  private closed = false;

  /** `mirrorFile` receives every line too: a self-contained recording of the run. */
  constructor(file: string, secrets: readonly string[], mirrorFile?: string) {
    this.file = file;
    this.secrets = secrets;
    this.descriptor = openSync(file, 'a');
    if (mirrorFile) this.mirror = openSync(mirrorFile, 'w');
  }

  onEvent(listener: RunEventListener): void {
    this.listeners.push(listener);
  }

  emit(type: string, data: Record<string, unknown>): void {
    if (!this.closed) {
      const line = `${redactSecrets(JSON.stringify({ type, time: new Date().toISOString(), ...data }), this.secrets)}\n`;
      writeSync(this.descriptor, line);
      if (this.mirror !== undefined) writeSync(this.mirror, line);
    }
    for (const listener of this.listeners) listener(type, data);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.descriptor);
    if (this.mirror !== undefined) closeSync(this.mirror);
  }
}
