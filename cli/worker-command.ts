/**
 * `manus worker`: takes batch items from a queue and runs them until stopped. Ctrl-C or SIGTERM
 * stops taking items and hands the running ones back to the queue, to be continued; exit 130.
 * `--models` names the models it runs items with that ask for one (an eval's matrix, a batch's
 * `--model`); an eval's `--cache` keeps replies in the worker's own `.manus/eval-cache/`.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheFolder } from '../runtime/services/cache-folder.js';
import { parseTrustGrants } from '../runtime/contract/trust-grants.js';
import { preloadModelSdk } from '../runtime/services/model/model-client.js';
import { runsDirectoryFor } from '../runtime/runs/run-preparation.js';
import { startQueueWorker } from '../runtime/applications/batch/queue/queue-worker.js';
import { modelLabel } from '../runtime/applications/eval/eval-matrix.js';
import { ReplyCache, replyCacheDirectory } from '../runtime/applications/eval/reply-cache.js';
import { defaultConcurrency } from './batch-command.js';
import { ExitCode, exitCodeForRun } from './exit-codes.js';

export interface WorkerCommandOptions {
  queue: string;
  concurrency?: number;
  trust: string[];
  runsDir?: string;
  stallTimeout?: number;
  models?: string;
}

/** Compressed events above this size stay on the worker; the result says where. */
const defaultEventsCapBytes = 4 * 1024 * 1024;

export async function workerCommand(options: WorkerCommandOptions): Promise<number> {
  const trust = [...parseTrustGrants(options.trust)];
  const models = [...new Set((options.models ?? '').split(',').map((model) => model.trim()).filter(Boolean))];
  const cacheDirectory = replyCacheDirectory(process.cwd());
  preloadModelSdk();
  const worker = await startQueueWorker({
    url: options.queue,
    environment: process.env,
    concurrency: options.concurrency ?? defaultConcurrency(),
    trust,
    runsDirectory: runsDirectoryFor(process.cwd(), process.env, options.runsDir),
    cacheDirectory: join(cacheFolder() ?? join(tmpdir(), 'manus-runtime'), 'definitions'),
    eventsCapBytes: Number(process.env.MANUS_WORKER_EVENTS_CAP_BYTES) || defaultEventsCapBytes,
    stallTimeoutMs: (options.stallTimeout ?? 30) * 1000,
    exitCodeFor: exitCodeForRun,
    models,
    // Keyed as an eval in one process keys its replies, in the folder this worker runs in.
    replyCache: (model, repeat) => {
      const cache = new ReplyCache(cacheDirectory);
      return { wrapModel: (chat) => cache.wrap(chat, modelLabel(model), repeat), counts: cache.counts };
    },
    log: (message) => process.stderr.write(`${new Date().toISOString()} ${message}\n`),
  });
  let signals = 0;
  const stop = () => {
    signals += 1;
    if (signals > 1) process.exit(ExitCode.interrupted);
    process.stderr.write('stopping: handing the running items back to the queue (Ctrl-C again to quit at once)\n');
    void worker.stop();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  await worker.closed;
  return ExitCode.interrupted;
}
