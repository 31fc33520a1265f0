/**
 * Memory and process limits for a whole command (all its processes together), from a cgroup per
 * command: with cgroup v2, memory.max and pids.max in one cgroup; with cgroup v1, a cgroup in the
 * memory hierarchy (memory.limit_in_bytes, and memory.memsw.limit_in_bytes so swap does not
 * stretch it) and one in the pids hierarchy (pids.max). Only a root runtime may make cgroups.
 * cgroup v2 lets a cgroup hand limits to its children only when no process lives in it (the root
 * of the hierarchy excepted), so the probe looks for a parent that can: the runtime's own cgroup,
 * then the root. Machines with the v2 hierarchy mounted but its controllers off (the "hybrid"
 * layout) have them in v1, which is tried next.
 */
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { SandboxError } from './sandbox-errors.js';
import { runtimeIsRoot } from './workspace-access.js';

/** Where per-command cgroups are made: one parent (v2), or the memory and the pids parents (v1). */
export interface CgroupPlace {
  version: 1 | 2;
  parents: string[];
}

export type CgroupAvailability = { usable: true; place: CgroupPlace } | { usable: false; reason: string };

export interface CgroupLimits {
  memoryMb: number;
  pids: number;
}

/** A command's cgroup: its folder in each hierarchy; the command enters each `cgroup.procs`. */
export interface CommandCgroup {
  version: 1 | 2;
  folders: string[];
}

const neededControllers = ['memory', 'pids'];
/** How long a killed cgroup may take to empty before its folder can be removed. */
const emptyingDeadlineMs = 2000;
const cgroupRoot = '/sys/fs/cgroup';
let created = 0;

let probing: Promise<CgroupAvailability> | undefined;

/** Finds, once per process, where per-command cgroups with memory and pids limits can be made. */
export function probeCgroups(): Promise<CgroupAvailability> {
  probing ??= findCgroupPlace();
  return probing;
}

async function findCgroupPlace(): Promise<CgroupAvailability> {
  if (!runtimeIsRoot()) return { usable: false, reason: 'the runtime is not root, so it cannot create cgroups' };
  const mounts = await readMounts();
  const problems: string[] = [];
  const version2 = mounts.find((mount) => mount.point === cgroupRoot && mount.type === 'cgroup2');
  if (version2) {
    const own = await ownCgroup('');
    for (const parent of new Set([join(cgroupRoot, own).replace(/\/$/, ''), cgroupRoot])) {
      const problem = await delegateControllers(parent);
      if (problem) {
        problems.push(problem);
        continue;
      }
      if (await tryPlace({ version: 2, parents: [parent] }, problems)) return { usable: true, place: { version: 2, parents: [parent] } };
    }
  } else {
    problems.push(`no cgroup v2 hierarchy with controllers is mounted at ${cgroupRoot}`);
  }
  const memory = mounts.find((mount) => mount.type === 'cgroup' && mount.options.includes('memory'));
  const pids = mounts.find((mount) => mount.type === 'cgroup' && mount.options.includes('pids'));
  if (!memory || !pids) {
    problems.push(`no cgroup v1 ${!memory && !pids ? 'memory and pids hierarchies are' : `${memory ? 'pids' : 'memory'} hierarchy is`} mounted`);
    return { usable: false, reason: problems.join('; ') };
  }
  const [ownMemory, ownPids] = await Promise.all([ownCgroup('memory'), ownCgroup('pids')]);
  const candidates: string[][] = [
    [join(memory.point, ownMemory), join(pids.point, ownPids)],
    [memory.point, pids.point],
  ];
  for (const parents of candidates) {
    const place: CgroupPlace = { version: 1, parents: parents.map((parent) => parent.replace(/\/$/, '')) };
    if (await tryPlace(place, problems)) return { usable: true, place };
  }
  return { usable: false, reason: problems.join('; ') };
}

/** A real trial: make one, set its limits, remove it. */
async function tryPlace(place: CgroupPlace, problems: string[]): Promise<boolean> {
  try {
    await removeCommandCgroup(await createCommandCgroup(place, { memoryMb: 64, pids: 16 }));
    return true;
  } catch (error) {
    problems.push(`${place.parents.join(' and ')}: ${(error as Error).message}`);
    return false;
  }
}

export async function createCommandCgroup(place: CgroupPlace, limits: CgroupLimits): Promise<CommandCgroup> {
  created += 1;
  const name = `manus-${process.pid}-${created}`;
  const cgroup: CommandCgroup = { version: place.version, folders: [] };
  const bytes = String(limits.memoryMb * 1024 * 1024);
  try {
    for (const parent of place.parents) {
      const folder = join(parent, name);
      await mkdir(folder);
      cgroup.folders.push(folder);
    }
    if (place.version === 2) {
      const [folder] = cgroup.folders;
      await writeFile(join(folder, 'memory.max'), bytes);
      // Without this, memory over the limit would go to swap instead of ending the command.
      await writeFile(join(folder, 'memory.swap.max'), '0').catch(() => undefined);
      await writeFile(join(folder, 'pids.max'), String(limits.pids));
    } else {
      const [memory, pids] = cgroup.folders;
      await writeFile(join(memory, 'memory.limit_in_bytes'), bytes);
      // Memory plus swap, where the kernel accounts swap: the same figure leaves no swap to stretch into.
      await writeFile(join(memory, 'memory.memsw.limit_in_bytes'), bytes).catch(() => undefined);
      await writeFile(join(pids, 'pids.max'), String(limits.pids));
    }
  } catch (error) {
    for (const folder of cgroup.folders) await rmdir(folder).catch(() => undefined);
    throw error;
  }
  return cgroup;
}

/** A command's cgroup with its limits, or a SandboxError saying why it could not be made. */
export function commandCgroupWithin(place: CgroupPlace, limits: CgroupLimits): Promise<CommandCgroup> {
  return createCommandCgroup(place, limits).catch((error: Error) => {
    throw new SandboxError('sandbox_failed', `Could not give the command a cgroup with its limits under ${place.parents.join(' and ')}: ${error.message}`);
  });
}

/** The files a process writes its id to, to enter the command's cgroup in every hierarchy. */
export function cgroupProcessFiles(cgroup: CommandCgroup): string[] {
  return cgroup.folders.map((folder) => join(folder, 'cgroup.procs'));
}

/**
 * The command line that enters `cgroup` and then runs `argv`: a shell moves itself into every
 * hierarchy's cgroup before anything is started, so no child starts outside.
 */
export function enterCgroupCommandLine(cgroup: CommandCgroup | undefined, argv: string[]): string[] {
  if (!cgroup) return argv;
  return ['/bin/sh', '-c', 'while [ "$1" != -- ]; do echo 0 > "$1" || exit 125; shift; done; shift; exec "$@"', 'sh', ...cgroupProcessFiles(cgroup), '--', ...argv];
}

/** Kills whatever is left in the cgroup and removes it once it is empty. */
export async function removeCommandCgroup(cgroup: CommandCgroup): Promise<void> {
  const deadline = Date.now() + emptyingDeadlineMs;
  for (const folder of cgroup.folders) {
    for (;;) {
      await killMembers(folder);
      try {
        await rmdir(folder);
        break;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') break;
        if (code !== 'EBUSY' || Date.now() > deadline) throw error;
        await delay(20);
      }
    }
  }
}

/** v2 kills a cgroup at once with `cgroup.kill`; v1 has no such file, so each member is killed. */
async function killMembers(folder: string): Promise<void> {
  if (await writeFile(join(folder, 'cgroup.kill'), '1').then(() => true, () => false)) return;
  const members = (await readFile(join(folder, 'cgroup.procs'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
  for (const pid of members) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

interface Mount {
  point: string;
  type: string;
  options: string[];
}

async function readMounts(): Promise<Mount[]> {
  const text = await readFile('/proc/self/mounts', 'utf8').catch(() => '');
  const mounts = text.split('\n').filter(Boolean).map((line) => {
    const fields = line.split(' ');
    return { point: fields[1], type: fields[2], options: (fields[3] ?? '').split(',') };
  });
  // The last mount at a place is the one in effect.
  return mounts.filter((mount, index) => !mounts.slice(index + 1).some((later) => later.point === mount.point));
}

/**
 * The runtime's cgroup in a hierarchy, relative to its root: "0::/path" for v2 (controller ''),
 * "N:memory:/path" for a v1 controller, in /proc/self/cgroup.
 */
async function ownCgroup(controller: string): Promise<string> {
  const lines = (await readFile('/proc/self/cgroup', 'utf8').catch(() => '')).split('\n');
  for (const line of lines) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (controllers === undefined) continue;
    if (controller === '' ? controllers === '' : controllers.split(',').includes(controller)) return path || '/';
  }
  return '/';
}

/** Makes memory and pids limits available to the children of a v2 `parent`; says why not when it cannot. */
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
