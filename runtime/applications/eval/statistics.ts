/**
 * The statistics an eval reports and gates on, each named in docs/evals.md with its reference:
 * Wilson score intervals for pass rates, percentile bootstrap intervals for mean scores, and for a
 * comparison with a baseline, a paired bootstrap of the per-row score differences and McNemar's
 * exact test of the rows that changed between pass and fail. Resampling uses a seeded generator,
 * so the same results give the same intervals on every machine.
 */

export interface Interval {
  low: number;
  high: number;
}

/** z for a two-sided 95% interval. */
const z95 = 1.959963984540054;

/** Wilson score interval (Wilson, 1927) of `passed` out of `total`, at 95%. */
export function wilsonInterval(passed: number, total: number): Interval {
  if (total === 0) return { low: 0, high: 1 };
  const p = passed / total;
  const z2 = z95 * z95;
  const centre = (p + z2 / (2 * total)) / (1 + z2 / total);
  const half = (z95 / (1 + z2 / total)) * Math.sqrt((p * (1 - p)) / total + z2 / (4 * total * total));
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/** mulberry32: small, fast, and the same sequence everywhere for a seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const bootstrapResamples = 2000;

export function mean(values: readonly number[]): number {
  if (values.length === 0) return 0;
  let total = 0;
  for (const value of values) total += value;
  return total / values.length;
}

/** Percentile bootstrap interval (Efron and Tibshirani, 1993) of the mean of `values`, at 95%. */
export function bootstrapMeanInterval(values: readonly number[], seed = 1): Interval {
  const count = values.length;
  if (count === 0) return { low: 0, high: 0 };
  if (count === 1) return { low: values[0], high: values[0] };
  const random = seededRandom(seed);
  const means = new Float64Array(bootstrapResamples);
  for (let resample = 0; resample < bootstrapResamples; resample += 1) {
    let total = 0;
    for (let draw = 0; draw < count; draw += 1) total += values[Math.floor(random() * count)];
    means[resample] = total / count;
  }
  means.sort();
  return { low: means[Math.floor(0.025 * (bootstrapResamples - 1))], high: means[Math.ceil(0.975 * (bootstrapResamples - 1))] };
}

export interface PairedComparison {
  /** Rows in both. */
  pairs: number;
  /** Mean of (current - baseline) per row. */
  difference: number;
  /** Paired bootstrap interval of that mean difference, at 95%. */
  interval: Interval;
  /** Rows that passed in the baseline and fail now, and the other way round. */
  newlyFailed: number;
  newlyPassed: number;
  /** McNemar's exact (binomial) two-sided p-value over the rows that changed. */
  mcnemarP: number;
  /** The interval lies wholly below zero: the score fell by more than chance explains. */
  worse: boolean;
}

export function pairedComparison(pairs: ReadonlyArray<{ current: number; baseline: number; currentPassed: boolean; baselinePassed: boolean }>): PairedComparison {
  const differences = pairs.map((pair) => pair.current - pair.baseline);
  const interval = bootstrapMeanInterval(differences, 7);
  const newlyFailed = pairs.filter((pair) => pair.baselinePassed && !pair.currentPassed).length;
  const newlyPassed = pairs.filter((pair) => !pair.baselinePassed && pair.currentPassed).length;
  return {
    pairs: pairs.length,
    difference: mean(differences),
    interval,
    newlyFailed,
    newlyPassed,
    mcnemarP: mcnemarExact(newlyFailed, newlyPassed),
    worse: pairs.length > 0 && interval.high < 0,
  };
}

/** McNemar's exact test (McNemar, 1947): two-sided binomial p-value of b against c discordant pairs. */
export function mcnemarExact(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  const k = Math.min(b, c);
  let tail = 0;
  // log-space binomial coefficients keep large n finite.
  for (let i = 0; i <= k; i += 1) tail += Math.exp(logChoose(n, i) - n * Math.LN2);
  return Math.min(1, 2 * tail);
}

function logChoose(n: number, k: number): number {
  return logFactorial(n) - logFactorial(k) - logFactorial(n - k);
}

function logFactorial(n: number): number {
  let total = 0;
  for (let i = 2; i <= n; i += 1) total += Math.log(i);
  return total;
}
