/** How times, durations and counts read in terminal output. */

export function formatDuration(milliseconds: number | undefined): string {
  if (milliseconds === undefined) return '-';
  if (milliseconds < 1000) return `${Math.round(milliseconds)} ms`;
  const totalSeconds = milliseconds / 1000;
  if (totalSeconds < 60) return `${totalSeconds.toFixed(1)} s`;
  const seconds = Math.floor(totalSeconds % 60);
  const minutes = Math.floor(totalSeconds / 60) % 60;
  const hours = Math.floor(totalSeconds / 3600);
  if (hours === 0) return `${minutes} min ${String(seconds).padStart(2, '0')} s`;
  return `${hours} h ${String(minutes).padStart(2, '0')} min`;
}

export function formatCount(count: number): string {
  return count.toLocaleString('en-US');
}

/** `YYYY-MM-DD HH:MM:SS` in local time: what a person compares with their clock. */
export function formatLocalTime(iso: string | undefined): string {
  if (iso === undefined) return '-';
  const time = new Date(iso);
  if (Number.isNaN(time.getTime())) return iso;
  const two = (value: number) => String(value).padStart(2, '0');
  return `${time.getFullYear()}-${two(time.getMonth() + 1)}-${two(time.getDate())} ${two(time.getHours())}:${two(time.getMinutes())}:${two(time.getSeconds())}`;
}

/** Columns padded to their widest cell; `right` aligns numbers. */
export function formatTable(header: string[], rows: string[][], right: ReadonlySet<number>): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (right.has(column) ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
