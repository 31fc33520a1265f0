import { readdirSync, readFileSync } from 'node:fs';

/** Whether a `/proc/<pid>/stat` line describes a zombie: ended, waiting for its parent to reap it. */
function isZombie(stat: string): boolean {
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

/** True once the pid is free or a zombie waiting for a parent that is not ours to reap. */
export function processIsGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  return isZombie(readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** Live host processes with `needle` among their arguments; sandboxed and container processes are host processes too. */
export function processesWithArgument(needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!isZombie(readFileSync(`/proc/${entry}/stat`, 'utf8')) && commandLine.split('\0').includes(needle)) found.push(Number(entry));
    } catch {
      // The process ended while being looked at.
    }
  }
  return found;
}
