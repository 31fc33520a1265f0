/**
 * What keeps host commands from outliving their command, found out once per process by trying it:
 *
 * - a PID namespace per command (util-linux `unshare --pid --fork --kill-child --mount-proc`, in a
 *   user namespace when the runtime is not root): when its first process ends, the kernel kills
 *   every process inside, `setsid` escapees included, and the command sees only its own processes;
 * - `setpriv --pdeathsig KILL`, so the kernel kills the command when the runtime dies, even by
 *   SIGKILL; `--kill-child` then takes the namespace with it;
 * - for a root runtime, a cgroup per command (v2, or v1's memory and pids hierarchies) that holds
 *   all its processes together to memory_mb and pids (host-cgroups.ts).
 *
 * Whatever is missing is named in `gaps`, which the run records as warnings.
 */
import { spawn } from 'node:child_process';
import { enterCgroupCommandLine, probeCgroups, type CgroupPlace, type CommandCgroup } from './host-cgroups.js';
import { runtimeIsRoot } from './workspace-access.js';

export interface HostContainment {
  /** `unshare` options that give each command its own PID namespace; undefined when that does not work here. */
  namespace: string[] | undefined;
  /** Whether `setpriv --pdeathsig` works here. */
  parentDeathSignal: boolean;
  /** Where to make per-command cgroups; undefined when there are no limits. */
  cgroups: CgroupPlace | undefined;
  /** What is not covered, one sentence each. */
  gaps: string[];
}

/** The first process of each namespace: runs the command as its child, so the command keeps ordinary signal handling. */
const namespaceInit = ['/bin/sh', '-c', '"$@"; exit "$?"', 'sh'];
const probeTimeoutMs = 10_000;
let containment: Promise<HostContainment> | undefined;

export function probeHostContainment(): Promise<HostContainment> {
  containment ??= runContainmentProbe();
  return containment;
}

/**
 * The command line that runs `argv` contained: [setpriv] [enter cgroup] [unshare ... sh] argv.
 * `statusEncodesSignal` is true when a shell reports the command's end, as 128 + N for signal N.
 */
export function containedCommandLine(
  containment: HostContainment,
  argv: string[],
  cgroup: CommandCgroup | undefined,
): { argv: string[]; statusEncodesSignal: boolean } {
  const dieWithRuntime = containment.parentDeathSignal ? ['setpriv', '--pdeathsig', 'KILL', '--'] : [];
  const namespace = containment.namespace ? ['unshare', ...containment.namespace, '--', ...namespaceInit] : [];
  return { argv: [...dieWithRuntime, ...enterCgroupCommandLine(cgroup, [...namespace, ...argv])], statusEncodesSignal: containment.namespace !== undefined };
}

async function runContainmentProbe(): Promise<HostContainment> {
  const gaps: string[] = [];
  if (process.platform !== 'linux') {
    gaps.push('host commands are contained by process groups only (no PID namespaces off Linux): a process that leaves its group with setsid survives its command');
    gaps.push('host commands die with the runtime only when it exits normally: if it is killed, they keep running');
    gaps.push('host commands have no memory or process limits');
    return { namespace: undefined, parentDeathSignal: false, cgroups: undefined, gaps };
  }
  const [namespace, parentDeathSignal, cgroups] = await Promise.all([
    findNamespaceOptions(),
    succeeds(['setpriv', '--pdeathsig', 'KILL', '--', 'true']),
    probeCgroups(),
  ]);
  if (!namespace.options) {
    gaps.push(
      `host commands are contained by process groups only, because a PID namespace cannot be made here (${namespace.reason}): a process that leaves its group with setsid survives its command`,
    );
  }
  if (!parentDeathSignal) {
    gaps.push(
      'setpriv --pdeathsig is not available here (a newer util-linux has it): host commands outlive a runtime that is killed, until the next start kills them',
    );
  }
  if (!cgroups.usable) gaps.push(`host commands have no memory or process limits: ${cgroups.reason}`);
  return { namespace: namespace.options, parentDeathSignal, cgroups: cgroups.usable ? cgroups.place : undefined, gaps };
}

/** The first `unshare` options that work here: a root runtime needs no user namespace; others map themselves into one. */
async function findNamespaceOptions(): Promise<{ options: string[] | undefined; reason: string }> {
  const base = ['--pid', '--fork', '--kill-child', '--mount-proc'];
  const candidates = [
    ...(runtimeIsRoot() ? [base] : []),
    ['--user', '--map-current-user', ...base],
    // util-linux before 2.38 has no --map-current-user.
    ['--user', '--map-root-user', ...base],
  ];
  let reason = '';
  for (const options of candidates) {
    const result = await tryCommand(['unshare', ...options, '--', ...namespaceInit, 'true']);
    if (result.ok) return { options, reason: '' };
    reason ||= result.reason;
  }
  return { options: undefined, reason };
}

async function succeeds(argv: string[]): Promise<boolean> {
  return (await tryCommand(argv)).ok;
}

function tryCommand(argv: string[]): Promise<{ ok: true } | { ok: false; reason: string }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'], timeout: probeTimeoutMs });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', (error) => resolve({ ok: false, reason: `${argv[0]}: ${error.message}` }));
    child.on('close', (code, signal) => {
      if (code === 0) resolve({ ok: true });
      else resolve({ ok: false, reason: stderr.trim().split('\n')[0] || `${argv[0]} ended with ${code ?? signal}` });
    });
  });
}
