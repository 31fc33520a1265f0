/**
 * Chooses and builds the sandbox a run's code-running tools share. `defaultSandboxKind` picks
 * bubblewrap when it works here, because it isolates at almost no cost (a few milliseconds
 * per command), and falls back to the host with a warning.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxSettings } from '../tool.js';
import { BwrapSandbox } from './bwrap-sandbox.js';
import { DockerSandbox } from './docker-sandbox.js';
import { HostSandbox } from './host-sandbox.js';
import { readSandboxOptions } from './sandbox-options.js';
import type { Sandbox, SandboxKind, SandboxPlacement } from './sandbox-types.js';

export type SandboxRequest = SandboxSettings & SandboxPlacement;

export type BwrapAvailability = { usable: true } | { usable: false; reason: string };

const probeTimeoutMs = 10_000;
let bwrapProbe: Promise<BwrapAvailability> | undefined;

export async function createSandbox(request: SandboxRequest): Promise<Sandbox> {
  const options = readSandboxOptions(request.options);
  switch (request.kind) {
    case 'host':
      return new HostSandbox(request.workspace, options);
    case 'bwrap':
      return BwrapSandbox.create({ workspace: request.workspace, network: request.network, options, protectedPaths: request.protectedPaths });
    case 'docker':
      return DockerSandbox.create({
        workspace: request.workspace,
        runId: request.runId,
        network: request.network,
        options,
        protectedPaths: request.protectedPaths,
      });
  }
}

/** bwrap when it works on this machine; otherwise host, after telling `warn` why in one line. */
export async function defaultSandboxKind({ warn }: { warn: (message: string) => void }): Promise<SandboxKind> {
  const availability = await probeBwrap();
  if (availability.usable) return 'bwrap';
  warn(`bubblewrap is not usable here (${availability.reason}); code runs on the host without isolation.`);
  return 'host';
}

/** Runs `true` in a real bwrap sandbox, exactly as commands will run; the answer is kept for the process. */
export function probeBwrap(): Promise<BwrapAvailability> {
  bwrapProbe ??= runBwrapProbe();
  return bwrapProbe;
}

async function runBwrapProbe(): Promise<BwrapAvailability> {
  if (process.platform !== 'linux') return { usable: false, reason: 'bubblewrap needs Linux' };
  const workspace = await mkdtemp(join(tmpdir(), 'manus-bwrap-probe-'));
  let sandbox: Sandbox | undefined;
  try {
    sandbox = await BwrapSandbox.create({ workspace, network: false, options: readSandboxOptions({}) });
    const result = await sandbox.run(['true'], { timeoutMs: probeTimeoutMs });
    if (result.exitCode === 0) return { usable: true };
    const detail = result.stderr.toString('utf8').trim().split('\n')[0];
    return { usable: false, reason: detail || `a test command ended with status ${result.exitCode ?? result.signal}` };
  } catch (error) {
    return { usable: false, reason: (error as Error).message };
  } finally {
    await sandbox?.dispose();
    await rm(workspace, { recursive: true, force: true });
  }
}
