/** A child process's peak memory and CPU time, for the benchmarks that state them (Linux, from /proc). */
import { readFileSync } from 'node:fs';

/** Watches /proc for a process's peak resident set (VmHWM) until stopped; undefined where there is no /proc. */
export function watchPeakMemory(pid: number | undefined): () => number | undefined {
  let peakKb: number | undefined;
  const read = () => {
    try {
      const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (match) peakKb = Number(match[1]);
    } catch {
      // Gone already, or no /proc on this system: keep the last reading.
    }
  };
  const timer = setInterval(read, 10);
  return () => {
    clearInterval(timer);
    return peakKb === undefined ? undefined : peakKb / 1024;
  };
}

/** Watches /proc for the CPU time (user and system) a process has used, in milliseconds, until stopped. */
export function watchCpuTime(pid: number | undefined): () => number | undefined {
  let ticks: number | undefined;
  const read = () => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
      ticks = Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone already: keep the last reading.
    }
  };
  const timer = setInterval(read, 10);
  // Linux counts in clock ticks of 100 a second on every architecture Node runs on.
  return () => {
    clearInterval(timer);
    return ticks === undefined ? undefined : ticks * 10;
  };
}
