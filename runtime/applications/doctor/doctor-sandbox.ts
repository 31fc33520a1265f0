/**
 * The sandbox `manus doctor` checks programs in: the one the agent's runs would use. A program is
 * not always the same inside as on this machine's PATH: bubblewrap shows its own /tmp, and a root
 * runtime's sandbox user cannot enter root's home (where pyenv puts its shims), so `python3` may
 * be another interpreter there; a container brings its own.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSandbox, probeBwrap } from '../../services/sandbox/create-sandbox.js';
import { probeDocker } from '../../services/sandbox/docker-connection.js';
import { readSandboxOptions } from '../../services/sandbox/sandbox-options.js';
import type { Sandbox } from '../../contract/sandbox-types.js';
import type { SandboxSettings } from '../../contract/tool.js';

export interface DoctorSandbox {
  /** Made on the first call, with an empty workspace of its own. */
  get(): Promise<Sandbox>;
  dispose(): Promise<void>;
}

export function doctorSandbox(settings: SandboxSettings, environment: NodeJS.ProcessEnv): DoctorSandbox {
  let made: Promise<{ sandbox: Sandbox; folder: string }> | undefined;
  return {
    get: async () => (await (made ??= makeSandbox(settings, environment))).sandbox,
    async dispose() {
      const done = await made?.catch(() => undefined);
      if (!done) return;
      await done.sandbox.dispose();
      await rm(done.folder, { recursive: true, force: true });
    },
  };
}

async function makeSandbox(settings: SandboxSettings, environment: NodeJS.ProcessEnv): Promise<{ sandbox: Sandbox; folder: string }> {
  const kind = settings.kind === 'auto' ? await autoKind(settings, environment) : settings.kind;
  const folder = await mkdtemp(join(tmpdir(), 'manus-doctor-'));
  try {
    const workspace = join(folder, 'workspace');
    await mkdir(workspace);
    const sandbox = await createSandbox({ ...settings, kind, network: false, workspace, runDirectory: folder, runId: `doctor-${process.pid}` });
    return { sandbox, folder };
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
}

/**
 * As a run resolves `auto`: bubblewrap, else Docker. Where neither works a run needs the user's
 * consent to use the host, and the doctor reports that; its checks then look at the host.
 */
async function autoKind(settings: SandboxSettings, environment: NodeJS.ProcessEnv): Promise<'bwrap' | 'docker' | 'host'> {
  if ((await probeBwrap()).usable) return 'bwrap';
  if ((await probeDocker(readSandboxOptions(settings.options).image, environment)).available) return 'docker';
  return 'host';
}
