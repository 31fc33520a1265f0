/**
 * Labels that tie a sandbox container to the process that made it, so containers left behind by
 * a runtime that was killed (SIGKILL, power loss) can be told apart from those of runs still
 * going, on this machine or another one sharing the daemon.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type Dockerode from 'dockerode';
import { connectDocker } from './docker-connection.js';

export const managedLabel = 'manus.managed';
export const runIdLabel = 'manus.run-id';
const ownerHostLabel = 'manus.owner-host';
const ownerPidLabel = 'manus.owner-pid';
const ownerStartLabel = 'manus.owner-start';

export function containerLabels(runId: string): Record<string, string> {
  return {
    [managedLabel]: 'true',
    [runIdLabel]: runId,
    [ownerHostLabel]: hostname(),
    [ownerPidLabel]: String(process.pid),
    [ownerStartLabel]: processStartTime(process.pid) ?? '',
  };
}

/**
 * False only when the owner is known to be gone: it ran on this machine and its pid is free or
 * now belongs to a process that started later. Containers from other machines count as alive.
 */
export function ownerIsAlive(labels: Record<string, string>): boolean {
  if (labels[ownerHostLabel] !== hostname()) return true;
  const pid = Number(labels[ownerPidLabel]);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const recordedStart = labels[ownerStartLabel];
  return !recordedStart || processStartTime(pid) === recordedStart;
}

/**
 * Removes sandbox containers whose runtime is gone. The kernel calls it when a run starts with
 * the docker sandbox. Returns the names of the removed containers.
 */
export async function cleanupLeftoverContainers(docker?: Dockerode): Promise<string[]> {
  const client = docker ?? (await connectDocker());
  const containers = await client.listContainers({ all: true, filters: { label: [`${managedLabel}=true`] } });
  const removed: string[] = [];
  for (const container of containers) {
    if (ownerIsAlive(container.Labels ?? {})) continue;
    try {
      await client.getContainer(container.Id).remove({ force: true, v: true });
      removed.push(container.Names[0]?.replace(/^\//, '') ?? container.Id);
    } catch (error) {
      // Another runtime cleaning up at the same moment may have removed it first.
      if ((error as { statusCode?: number }).statusCode !== 404) throw error;
    }
  }
  return removed;
}

/** The start time of a process in clock ticks since boot (Linux), which tells a reused pid apart. */
function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces; the fields after its closing parenthesis do not.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}
