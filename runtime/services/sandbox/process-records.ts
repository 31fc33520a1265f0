/**
 * The host commands a runtime has running, written to `processes.json` in the run's folder while
 * they run. A runtime that dies without cleaning up (SIGKILL, out of memory, a power cut) leaves
 * the file behind, and the next `manus run` or `resume` kills what it names. Every process is
 * named with its start time as well as its pid, so a pid the system has since given to another
 * process is never killed.
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

export const processRecordsFile = 'processes.json';

/** A process named so that pid reuse is detected: the start time from /proc/<pid>/stat. */
export interface RecordedProcess {
  pid: number;
  startTime: string;
}

export interface RecordedCommand {
  /** The process group the command was started in; its leader's pid. */
  processGroup: RecordedProcess;
  /** The first process of the command's PID namespace; killing it ends every process inside. */
  namespaceInit?: RecordedProcess;
  /** The command's own cgroups (one per hierarchy), when it has them. */
  cgroups?: string[];
}

interface RecordsFile {
  version: 1;
  runtime: RecordedProcess & { host: string };
  commands: RecordedCommand[];
}

export interface LeftoverCleanup {
  /** Process groups and namespaces that were still running and were killed. */
  killed: number[];
  /** Files whose runtime is still alive: another run in progress, left alone. */
  skipped: string[];
}

/** The start time of a live process, or undefined when there is no such process. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces and parentheses; the fields after it do not.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Field 3 of the rest is the state (Z: ended, waiting to be reaped); field 22 of the line is the start time.
    if (fields[0] === 'Z') return undefined;
    return fields[19];
  } catch {
    return undefined;
  }
}

/** The record of one runtime's host commands in one run folder, rewritten as they start and end. */
export class ProcessRecords {
  private readonly file: string;
  private readonly commands = new Map<number, RecordedCommand>();
  private readonly runtime: RecordsFile['runtime'];

  constructor(runDirectory: string) {
    this.file = join(runDirectory, processRecordsFile);
    this.runtime = { pid: process.pid, startTime: processStartTime(process.pid) ?? '', host: hostname() };
  }

  /** Records a command that has just started; returns false when its process is already gone. */
  add(processGroup: number, cgroups: string[] | undefined): boolean {
    const startTime = processStartTime(processGroup);
    if (startTime === undefined) return false;
    this.commands.set(processGroup, { processGroup: { pid: processGroup, startTime }, ...(cgroups ? { cgroups } : {}) });
    this.write();
    return true;
  }

  setNamespaceInit(processGroup: number, init: RecordedProcess): void {
    const command = this.commands.get(processGroup);
    if (!command) return;
    command.namespaceInit = init;
    this.write();
  }

  remove(processGroup: number): void {
    if (!this.commands.delete(processGroup)) return;
    this.write();
  }

  private write(): void {
    try {
      if (this.commands.size === 0) {
        rmSync(this.file, { force: true });
        return;
      }
      const content: RecordsFile = { version: 1, runtime: this.runtime, commands: [...this.commands.values()] };
      // Written aside and renamed, so a runtime killed while writing never leaves half a file.
      const temporary = `${this.file}.${process.pid}.tmp`;
      writeFileSync(temporary, `${JSON.stringify(content, null, 2)}\n`);
      renameSync(temporary, this.file);
    } catch {
      // The record only serves the clean-up after a crash; a command must not fail, or be left
      // unwatched after it started, because its run folder could not be written.
    }
  }
}

/**
 * Kills what runtimes that are no longer alive left running, as recorded in the run folders
 * under `runsDirectory`, and removes their records. Records of a live runtime are left alone.
 */
export function killLeftoverProcesses(runsDirectory: string): LeftoverCleanup {
  const cleanup: LeftoverCleanup = { killed: [], skipped: [] };
  let entries: string[];
  try {
    entries = readdirSync(runsDirectory);
  } catch {
    return cleanup;
  }
  for (const entry of entries) {
    const file = join(runsDirectory, entry, processRecordsFile);
    if (!existsSync(file)) continue;
    const records = readRecords(file);
    if (records && !isGone(records.runtime)) {
      cleanup.skipped.push(file);
      continue;
    }
    for (const command of records?.commands ?? []) cleanup.killed.push(...killRecordedCommand(command));
    rmSync(file, { force: true });
  }
  return cleanup;
}

function readRecords(file: string): RecordsFile | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as RecordsFile;
    if (parsed.version !== 1 || !Array.isArray(parsed.commands)) return undefined;
    return parsed;
  } catch {
    // A record that cannot be read names nothing that can be safely killed.
    return undefined;
  }
}

/** Whether the runtime that wrote a record has ended; one on another host cannot be checked, so counts as alive. */
function isGone(runtime: RecordsFile['runtime']): boolean {
  if (runtime.host !== hostname()) return false;
  return !isSameProcess(runtime);
}

function isSameProcess(recorded: RecordedProcess): boolean {
  return processStartTime(recorded.pid) === recorded.startTime;
}

function killRecordedCommand(command: RecordedCommand): number[] {
  const killed: number[] = [];
  const init = command.namespaceInit;
  if (init && isSameProcess(init) && signal(init.pid)) killed.push(init.pid);
  const leaderStartTime = processStartTime(command.processGroup.pid);
  if (leaderStartTime === command.processGroup.startTime) {
    if (signal(-command.processGroup.pid)) killed.push(command.processGroup.pid);
  } else if (leaderStartTime === undefined) {
    // The leader has ended but processes it left in its group may not have. A group's number stays
    // reserved while any member lives, so members that started after the leader are its own.
    const members = groupMembersStartedSince(command.processGroup);
    for (const pid of members) signal(pid);
    if (members.length > 0) killed.push(command.processGroup.pid);
  }
  for (const cgroup of command.cgroups ?? []) killCgroup(cgroup);
  return killed;
}

function groupMembersStartedSince(leader: RecordedProcess): number[] {
  const members: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return members;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // After the name: state, parent, group, ...; the start time is the 20th.
      if (Number(fields[2]) === leader.pid && fields[0] !== 'Z' && BigInt(fields[19]) >= BigInt(leader.startTime)) members.push(Number(entry));
    } catch {
      // The process ended while being looked at.
    }
  }
  return members;
}

function signal(pid: number): boolean {
  try {
    process.kill(pid, 'SIGKILL');
    return true;
  } catch {
    return false;
  }
}

function killCgroup(path: string): void {
  try {
    writeFileSync(join(path, 'cgroup.kill'), '1');
  } catch {
    // cgroup v1 has no cgroup.kill: its members are killed one by one.
    let members = '';
    try {
      members = readFileSync(join(path, 'cgroup.procs'), 'utf8');
    } catch {
      // Already removed.
    }
    for (const pid of members.split('\n').filter(Boolean)) signal(Number(pid));
  }
  try {
    rmdirSync(path);
  } catch {
    // Already removed, or still emptying; an empty cgroup left behind holds nothing.
  }
}
