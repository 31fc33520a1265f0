/**
 * Memory and process limits for host commands, from a cgroup v2 per command (memory.max,
 * pids.max). Only a root runtime may make cgroups, and cgroup v2 lets a cgroup hand limits to
 * its children only when no process lives in it (the root of the hierarchy excepted), so the
 * probe looks for a parent that can: the runtime's own cgroup, then the root.
 */
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { runtimeIsRoot } from './workspace-access.js';

export type CgroupAvailability = { usable: true; parent: string } | { usable: false; reason: string };

export interface CgroupLimits {
  memoryMb: number;
  pids: number;
}

const neededControllers = ['memory', 'pids'];
/** How long a killed cgroup may take to empty before its folder can be removed. */
const emptyingDeadlineMs = 2000;
let created = 0;

/** Finds a cgroup under which per-command cgroups with memory and pids limits can be made. */
export async function probeCgroups(): Promise<CgroupAvailability> {
  if (!runtimeIsRoot()) return { usable: false, reason: 'the runtime is not root, so it cannot create cgroups' };
  const mountPoint = await cgroup2MountPoint();
  if (!mountPoint) return { usable: false, reason: 'no cgroup v2 hierarchy is mounted at /sys/fs/cgroup' };
  const own = await ownCgroup();
  const candidates = [...new Set([join(mountPoint, own).replace(/\/$/, ''), mountPoint])];
  const problems: string[] = [];
  for (const parent of candidates) {
    const problem = await delegateControllers(parent);
    if (problem) {
      problems.push(problem);
      continue;
    }
    // A real trial: make one, set both limits, remove it.
    try {
      const trial = await createCommandCgroup(parent, { memoryMb: 64, pids: 16 });
      await removeCommandCgroup(trial);
      return { usable: true, parent };
    } catch (error) {
      problems.push(`${parent}: ${(error as Error).message}`);
    }
  }
  return { usable: false, reason: problems.join('; ') };
}

export async function createCommandCgroup(parent: string, limits: CgroupLimits): Promise<string> {
  created += 1;
  const path = join(parent, `manus-${process.pid}-${created}`);
  await mkdir(path);
  try {
    await writeFile(join(path, 'memory.max'), String(limits.memoryMb * 1024 * 1024));
    // Without this, memory over the limit would go to swap instead of ending the command.
    await writeFile(join(path, 'memory.swap.max'), '0').catch(() => undefined);
    await writeFile(join(path, 'pids.max'), String(limits.pids));
  } catch (error) {
    await rmdir(path).catch(() => undefined);
    throw error;
  }
  return path;
}

/** Kills whatever is left in the cgroup and removes it once it is empty. */
export async function removeCommandCgroup(path: string): Promise<void> {
  await writeFile(join(path, 'cgroup.kill'), '1').catch(() => undefined);
  const deadline = Date.now() + emptyingDeadlineMs;
  for (;;) {
    try {
      await rmdir(path);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY' || Date.now() > deadline) throw error;
      await delay(20);
    }
  }
}

async function cgroup2MountPoint(): Promise<string | undefined> {
  const mounts = await readFile('/proc/self/mounts', 'utf8').catch(() => '');
  // The last mount at a place is the one in effect.
  const line = mounts.split('\n').map((entry) => entry.split(' ')).filter((fields) => fields[1] === '/sys/fs/cgroup').at(-1);
  return line?.[2] === 'cgroup2' ? '/sys/fs/cgroup' : undefined;
}

/** The runtime's cgroup, relative to the hierarchy's root ("0::/path" in /proc/self/cgroup). */
async function ownCgroup(): Promise<string> {
  const lines = (await readFile('/proc/self/cgroup', 'utf8').catch(() => '')).split('\n');
  return lines.find((line) => line.startsWith('0::'))?.slice(3) || '/';
}

/** Makes memory and pids limits available to the children of `parent`; says why not when it cannot. */
async function delegateControllers(parent: string): Promise<string | undefined> {
  const available = (await readFile(join(parent, 'cgroup.controllers'), 'utf8').catch(() => '')).split(/\s+/);
  const missing = neededControllers.filter((name) => !available.includes(name));
  if (missing.length > 0) return `${parent} does not offer the ${missing.join(' and ')} controller${missing.length > 1 ? 's' : ''}`;
  const enabled = (await readFile(join(parent, 'cgroup.subtree_control'), 'utf8').catch(() => '')).split(/\s+/);
  const toEnable = neededControllers.filter((name) => !enabled.includes(name));
  if (toEnable.length === 0) return undefined;
  try {
    await writeFile(join(parent, 'cgroup.subtree_control'), toEnable.map((name) => `+${name}`).join(' '));
    return undefined;
  } catch (error) {
    return `${parent} cannot pass the limits to child cgroups (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
}
