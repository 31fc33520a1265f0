/**
 * Per-run resources that tools keep between calls (shells, interpreters, browsers, containers).
 * Disposed at the end of the run, including after an interrupt, in reverse order of when they became
 * ready: one made with the help of another (a server started in the run's sandbox) goes first.
 */
import type { RunResources } from '../contract/tool.js';

interface Entry {
  value: Promise<unknown>;
  dispose?: (value: any) => void | Promise<void>;
}

export class RunResourceRegistry implements RunResources {
  private readonly entries = new Map<string, Entry>();

  get<T>(key: string, create: () => T | Promise<T>, dispose?: (value: T) => void | Promise<void>): Promise<T> {
    const existing = this.entries.get(key);
    if (existing) return existing.value as Promise<T>;
    const value = Promise.resolve().then(create);
    const entry: Entry = { value, dispose };
    value.then(
      () => {
        // Last in the map, so first to go: what it used while being made is ready already.
        if (this.entries.get(key) !== entry) return;
        this.entries.delete(key);
        this.entries.set(key, entry);
      },
      // A failed creation must not be cached: the next call tries again.
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    this.entries.set(key, entry);
    return value;
  }

  async release(key: string): Promise<void> {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    await disposeEntry(entry);
  }

  /** Disposes everything; returns the problems instead of throwing, so one failure does not leak the rest. */
  async disposeAll(): Promise<string[]> {
    const problems: string[] = [];
    for (const [key, entry] of [...this.entries].reverse()) {
      this.entries.delete(key);
      try {
        await disposeEntry(entry);
      } catch (error) {
        problems.push(`${key}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    return problems;
  }
}

async function disposeEntry(entry: Entry): Promise<void> {
  let value: unknown;
  try {
    value = await entry.value;
  } catch {
    return;
  }
  await entry.dispose?.(value);
}
