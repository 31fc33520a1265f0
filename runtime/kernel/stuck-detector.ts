/**
 * Notices an agent repeating itself: the same tool calls with the same arguments, or the same
 * text, turn after turn (or two turns alternating). The first time it asks the loop to nudge the
 * model; if the next turn continues the same pattern, the run is stuck.
 */

export type StuckVerdict = 'ok' | 'nudge' | 'stuck';

export class StuckDetector {
  private readonly threshold: number;
  private readonly history: string[] = [];
  private readonly nudged = new Set<string>();

  constructor(threshold: number) {
    this.threshold = threshold;
  }

  observe(signature: string): StuckVerdict {
    this.history.push(signature);
    if (this.history.length > this.threshold * 2 + 2) this.history.shift();
    const pattern = this.repeatingPattern();
    if (!pattern) return 'ok';
    if (this.nudged.has(pattern)) return 'stuck';
    this.nudged.add(pattern);
    return 'nudge';
  }

  /** A pattern of one or two turns that fills the last `threshold` repetitions. */
  private repeatingPattern(): string | undefined {
    for (const period of [1, 2]) {
      const needed = period === 1 ? this.threshold : period * Math.max(2, this.threshold - 1);
      if (this.history.length < needed) continue;
      const recent = this.history.slice(-needed);
      const unit = recent.slice(0, period);
      if (period === 2 && unit[0] === unit[1]) continue;
      // A cycle is the same cycle whichever turn it is seen from: [a, b] and [b, a] share one key.
      if (recent.every((signature, index) => signature === unit[index % period])) return [...unit].sort().join('\u0000');
    }
    return undefined;
  }
}

/** A turn's identity for repetition: its tool calls with canonical arguments, or its text. */
export function turnSignature(text: string | null, calls: ReadonlyArray<{ name: string; arguments: unknown }>): string {
  if (calls.length === 0) return `text:${(text ?? '').trim()}`;
  return calls.map((call) => `${call.name}(${canonicalJson(call.arguments)})`).join(';');
}

function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([left], [right]) => left.localeCompare(right));
  return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${canonicalJson(entry)}`).join(',')}}`;
}
