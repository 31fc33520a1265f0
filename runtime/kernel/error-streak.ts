/**
 * Notices an agent that keeps failing with calls that differ each time, which the repetition
 * detector cannot see: after `threshold` failed tool calls in a row the loop nudges the model;
 * if the streak reaches twice that, the run is stuck. Any call that succeeds ends the streak.
 */
import type { StuckVerdict } from './stuck-detector.js';

export class ErrorStreak {
  private readonly threshold: number;
  private length = 0;
  private nudged = false;

  /** A threshold of 0 turns the rule off. */
  constructor(threshold: number) {
    this.threshold = threshold;
  }

  get failures(): number {
    return this.length;
  }

  /** Takes one turn's calls in the order the model made them: true for each call that failed. */
  observe(failed: readonly boolean[]): StuckVerdict {
    for (const callFailed of failed) {
      if (callFailed) this.length += 1;
      else {
        this.length = 0;
        this.nudged = false;
      }
    }
    if (this.threshold <= 0 || this.length < this.threshold) return 'ok';
    // The model is always warned once before the run is stopped, even when one turn jumps past both marks.
    if (!this.nudged) {
      this.nudged = true;
      return 'nudge';
    }
    return this.length >= this.threshold * 2 ? 'stuck' : 'ok';
  }
}
