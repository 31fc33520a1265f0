/**
 * Builds the sandbox a run's code-running tools share, and probes whether bubblewrap works here.
 * The `auto` kind is resolved before this (auto-sandbox.ts): bubblewrap isolates at almost no
 * cost (a few milliseconds per command), so it comes first. Each kind's code loads when a sandbox
 * of that kind is made: a run whose tools run no commands loads none of them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxSettings } from '../../contract/tool.js';
import { diagnoseBwrapFailure, type BwrapDiagnosis } from './bwrap-diagnosis.js';
import { SandboxError } from './sandbox-errors.js';
import { readSandboxOptions } from './sandbox-options.js';
import type { Sandbox, SandboxPlacement } from '../../contract/sandbox-types.js';

export type SandboxRequest = SandboxSettings & SandboxPlacement;

export type BwrapAvailability = { usable: true } | ({ usable: false } & BwrapDiagnosis);

const probeTimeoutMs = 10_000;
let bwrapProbe: Promise<BwrapAvailability> | undefined;

export async function createSandbox(request: SandboxRequest): Promise<Sandbox> {
  const options = readSandboxOptions(request.options);
  switch (request.kind) {
    case 'host': {
      const { HostSandbox } = await import('./host-sandbox.js');
      return HostSandbox.create({ workspace: request.workspace, runDirectory: request.runDirectory, options });
    }
    case 'bwrap': {
      const { BwrapSandbox } = await import('./bwrap-sandbox.js');
      return BwrapSandbox.create({ workspace: request.workspace, network: request.network, options, protectedPaths: request.protectedPaths, egress: request.egress });
    }
    case 'docker': {
      const { DockerSandbox } = await import('./docker-sandbox.js');
      return DockerSandbox.create({
        workspace: request.workspace,
        runId: request.runId,
        network: request.network,
        options,
        protectedPaths: request.protectedPaths,
        egress: request.egress,
      });
    }
    case 'auto':
      throw new SandboxError('sandbox_options_invalid', 'the auto sandbox kind must be resolved to bwrap, docker or host before a sandbox is created.');
  }
}

/** Runs `true` in a real bwrap sandbox, exactly as commands will run; the answer is kept for the process. */
export function probeBwrap(): Promise<BwrapAvailability> {
  bwrapProbe ??= runBwrapProbe();
  return bwrapProbe;
}

async function runBwrapProbe(): Promise<BwrapAvailability> {
  if (process.platform !== 'linux') return { usable: false, problem: 'failed', reason: 'bubblewrap needs Linux', fix: 'use the Docker sandbox' };
  const workspace = await mkdtemp(join(tmpdir(), 'manus-bwrap-probe-'));
  let sandbox: Sandbox | undefined;
  try {
    const { BwrapSandbox } = await import('./bwrap-sandbox.js');
    sandbox = await BwrapSandbox.create({ workspace, network: false, options: readSandboxOptions({}) });
    const result = await sandbox.run(['true'], { timeoutMs: probeTimeoutMs });
    if (result.exitCode === 0) return { usable: true };
    const detail = result.stderr.toString('utf8').trim().split('\n')[0];
    return { usable: false, ...diagnoseBwrapFailure(detail || `a test command ended with status ${result.exitCode ?? result.signal}`) };
  } catch (error) {
    return { usable: false, ...diagnoseBwrapFailure((error as Error).message) };
  } finally {
    await sandbox?.dispose();
    await rm(workspace, { recursive: true, force: true });
  }
}
