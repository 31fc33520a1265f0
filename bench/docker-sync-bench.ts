/**
 * What copying the workspace costs a docker sandbox whose daemon is on another machine, measured
 * on the local daemon with the workspace copied (MANUS_DOCKER_WORKSPACE=copy takes the same path;
 * a real remote daemon adds its network's round trips and bandwidth). For a workspace of 200 files
 * (about 2 MB, as a small project) and one of 2,000 files (about 20 MB), it prints the median time
 * of `true` with the workspace bind-mounted and copied, and of a command that changes one file,
 * plus the first copy into a new container.
 *
 *   npm run bench:docker-sync      BENCH_REPETITIONS=9 by default
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxDefaults } from '../runtime/config/defaults.js';
import { probeDocker } from '../runtime/services/sandbox/docker-connection.js';
import { DockerSandbox } from '../runtime/services/sandbox/docker-sandbox.js';
import { readSandboxOptions } from '../runtime/services/sandbox/sandbox-options.js';

const repetitions = Number(process.env.BENCH_REPETITIONS ?? 9);

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return Math.round(sorted[Math.floor(sorted.length / 2)]);
}

function makeWorkspace(files: number): string {
  const workspace = mkdtempSync(join(tmpdir(), 'manus-sync-bench-'));
  for (let index = 0; index < files; index += 1) {
    const folder = join(workspace, `folder-${index % 20}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `file-${index}.txt`), 'x'.repeat(10_000));
  }
  return workspace;
}

async function timed(action: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await action();
  return performance.now() - started;
}

async function measure(files: number): Promise<void> {
  const workspace = makeWorkspace(files);
  try {
    const figures: Record<string, number> = {};
    for (const workspaceMode of ['mount', 'copy'] as const) {
      let sandbox: DockerSandbox | undefined;
      const created = await timed(async () => {
        sandbox = await DockerSandbox.create({ workspace, runId: 'sync-bench', network: false, options: readSandboxOptions({}), workspaceMode });
      });
      try {
        const nothing: number[] = [];
        const oneFile: number[] = [];
        for (let index = 0; index < repetitions; index += 1) {
          nothing.push(await timed(() => sandbox!.run('true', { timeoutMs: 60_000 })));
          oneFile.push(await timed(() => sandbox!.run(`echo ${index} > folder-0/changed.txt`, { timeoutMs: 60_000 })));
        }
        figures[`${workspaceMode}: create`] = Math.round(created);
        figures[`${workspaceMode}: true`] = median(nothing);
        figures[`${workspaceMode}: change one file`] = median(oneFile);
      } finally {
        await sandbox?.dispose();
      }
    }
    console.log(`${files} files, ${(files * 10_000) / 1e6} MB (median of ${repetitions}, ms):`);
    for (const [name, value] of Object.entries(figures)) console.log(`  ${name.padEnd(28)} ${value}`);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

const availability = await probeDocker(sandboxDefaults.image);
if (!availability.available) {
  console.error(`docker sync bench skipped: ${availability.reason}`);
  process.exit(0);
}
await measure(200);
await measure(2000);
