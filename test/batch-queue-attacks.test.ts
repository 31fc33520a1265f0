/**
 * Attacks on queued batches: what the dependency shipping reads into the queue from crafted
 * packages, and what the batch does with results a worker returns.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQueueUrl } from '../runtime/applications/batch/queue/redis-connection.js';
import { collectRunDefinition, materialiseRunDefinition, type RunDefinition } from '../runtime/applications/batch/run-definition.js';
import { resolveRecipe } from '../runtime/runs/recipe/resolve-recipe.js';
import { runCli } from './support/run-cli.js';
import { batchEnvironment, batchFolder, chatRequests, readBatch, spawnCli, startBatchModel, waitFor, writeBatchFixture, type SpawnedCli } from './support/batch-fixture.js';
import { batchWaitingOnQueue, startWorker, stopWorkers } from './support/queue-fixture.js';
import { removedAfterEach } from './support/removed-folders.js';
import { redisMissing, startRedis, type RedisServer } from './support/redis-server.js';

const missing = redisMissing();
if (missing) process.stdout.write(`batch-queue-attacks queue tests skipped: ${missing}\n`);

const { fixture, remove } = removedAfterEach();

const recipe = 'version: 1\nname: attacks\nprompt: Do it.\nagent:\n  tools: [peek, terminate]\n';
const plugin = (imported: string) => `import { defineTool } from 'manus-runtime';\nimport '${imported}';\nexport default defineTool({ name: 'peek', description: 'Peeks.', parameters: { type: 'object' }, execute: () => 'peeked' });\n`;

async function definitionOf(folder: string): Promise<RunDefinition> {
  const plan = await resolveRecipe('recipe.yaml', { cwd: folder, environment: { XDG_CONFIG_HOME: join(folder, 'no-config') } });
  return collectRunDefinition(plan, folder);
}

const secret = 'PRIVATE-KEY-MATERIAL-4b1d';
const shippedText = (definition: RunDefinition) => definition.files.map((file) => `${file.path}\n${Buffer.from(file.content, 'base64').toString('utf8')}`).join('\n');

describe('the npm packages a queued batch ships, from packages written by others', () => {
  it('a dependency named with .. segments in a package.json ships no folder outside node_modules', async () => {
    // A private project beside the batch's folder: it has a package.json, as most projects do.
    const privateProject = fixture({ 'package.json': '{"name":"private-project"}', '.env': `TOKEN=${secret}\n` });
    const project = fixture({
      'recipe.yaml': recipe,
      'plugins/peek.ts': plugin('crafted-kit'),
      'node_modules/crafted-kit/package.json': JSON.stringify({ name: 'crafted-kit', version: '1.0.0', dependencies: { [`../../../../${basename(privateProject)}`]: '*' } }),
      'node_modules/crafted-kit/index.js': '',
    });
    const definition = await definitionOf(project);
    expect(definition.files.map((file) => file.path).filter((path) => path.split('/').includes('..'))).toEqual([]);
    expect(shippedText(definition)).not.toContain(secret);
  });

  it('a link inside a package to a file or folder outside it ships nothing from outside', async () => {
    const outside = fixture({ 'id_ed25519': `${secret}\n`, 'folder/credentials': `${secret}\n` });
    const project = fixture({
      'recipe.yaml': recipe,
      'plugins/peek.ts': plugin('leaky-kit'),
      'node_modules/leaky-kit/package.json': JSON.stringify({ name: 'leaky-kit', version: '1.0.0', main: 'index.js' }),
      'node_modules/leaky-kit/index.js': '',
    });
    symlinkSync(join(outside, 'id_ed25519'), join(project, 'node_modules/leaky-kit/notes.txt'));
    symlinkSync(join(outside, 'folder'), join(project, 'node_modules/leaky-kit/data'));
    const definition = await definitionOf(project);
    expect(shippedText(definition)).not.toContain(secret);
  });

  it("a linked package (a workspace's own folder) ships no npm credentials that npm itself never packs", async () => {
    const workspacePackage = fixture({
      'package.json': JSON.stringify({ name: 'shared-kit', version: '1.0.0', main: 'index.js' }),
      'index.js': '',
      '.npmrc': `//registry.npmjs.org/:_authToken=${secret}\n`,
    });
    const project = fixture({ 'recipe.yaml': recipe, 'plugins/peek.ts': plugin('shared-kit') });
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(workspacePackage, join(project, 'node_modules/shared-kit'));
    const definition = await definitionOf(project);
    expect(definition.files.map((file) => file.path)).toContain('node_modules/shared-kit/index.js');
    expect(shippedText(definition)).not.toContain(secret);
  });

  it("a pack's prompt file linked to a file of the project stops the batch instead of shipping it", async () => {
    const project = fixture({
      'recipe.yaml': 'version: 1\nname: attacks\nprompt: Do it.\npacks: [acme-prompts]\nagent:\n  tools: [terminate]\n',
      '.env': `TOKEN=${secret}\n`,
      'node_modules/acme-prompts/package.json': JSON.stringify({ name: 'acme-prompts', version: '1.0.0', manus: {} }),
      'node_modules/acme-prompts/recipes/ask.yaml': 'version: 1\nname: ask\nprompt: { file: ../prompts/ask.md }\nagent:\n  tools: [terminate]\n',
    });
    mkdirSync(join(project, 'node_modules/acme-prompts/prompts'));
    symlinkSync(join(project, '.env'), join(project, 'node_modules/acme-prompts/prompts/ask.md'));
    // The recipe is refused when it is read, before a batch could build anything to ship.
    const plan = resolveRecipe('node_modules/acme-prompts/recipes/ask.yaml', { cwd: project, environment: { XDG_CONFIG_HOME: join(project, 'no-config') } });
    await expect(plan).rejects.toThrow(/prompt file '\.\.\/prompts\/ask\.md' cannot be read: .*ask\.md is a symbolic link/);
  });

  it("a link in an installed pack's plugins folder to a file outside the pack ships nothing from outside", async () => {
    const outside = fixture({ 'id_ed25519': `${secret}\n` });
    const project = fixture({
      'recipe.yaml': 'version: 1\nname: attacks\nprompt: Do it.\npacks: [acme-pack]\nagent:\n  tools: [greet, terminate]\n',
      'node_modules/acme-pack/package.json': JSON.stringify({ name: 'acme-pack', version: '1.0.0', manus: {}, peerDependencies: { 'manus-runtime': '*' } }),
      'node_modules/acme-pack/plugins/greet.ts': "import { defineTool } from 'manus-runtime';\nexport default defineTool({ name: 'greet', description: 'Greets.', parameters: { type: 'object' }, execute: () => 'hello' });\n",
    });
    symlinkSync(join(outside, 'id_ed25519'), join(project, 'node_modules/acme-pack/plugins/notes.txt'));
    const definition = await definitionOf(project);
    expect(definition.files.map((file) => file.path)).toContain('node_modules/acme-pack/plugins/greet.ts');
    expect(shippedText(definition)).not.toContain(secret);
  });
});

describe.skipIf(missing !== undefined)('what a worker returns to a queued batch', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  const outcomeOf = (runId: string, answer: string) => ({
    runId, status: 'success', exitCode: 0, answer, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, durationMs: 1, startedAt: new Date().toISOString(),
  });
  const rogueIdentity = { id: 'rogue', host: 'rogue', pid: 1 };
  const eventsFor = (runId: string) => gzipSync(`${JSON.stringify({ type: 'run-start', runId, workspace: `workspace/${runId}` })}\n${JSON.stringify({ type: 'run-end', status: 'success' })}\n`).toString('base64');

  /** A batch of `items` run against a worker that answers each job with `result(index, job)`. */
  async function batchAgainst(items: number, result: (index: number, job: Job) => unknown, extraArguments: string[] = []) {
    const fixture = writeBatchFixture({ items });
    remove(fixture);
    const { Worker } = await import('bullmq');
    const server = await startBatchModel({ steps: 1 });
    const rogue = new Worker('manus-batch-items', async (job) => result(job.data.index as number, job), { connection: parseQueueUrl(redis.url, {}).options, prefix: 'manus' });
    try {
      const cli = await runCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', redis.url, '--ci', ...extraArguments], { cwd: fixture, env: batchEnvironment(server), timeoutMs: 60_000 });
      return { fixture, cli };
    } finally {
      await rogue.close();
      await server.close();
    }
  }

  it('events that are not gzip make that item an error; the batch still ends with no item left running', async () => {
    const { fixture, cli } = await batchAgainst(2, (index) => ({
      kind: 'finished',
      outcome: outcomeOf(`run-${index}`, `answer ${index}`),
      worker: rogueIdentity,
      events: index === 0 ? Buffer.from('not gzip at all').toString('base64') : eventsFor(`run-${index}`),
    }));
    const { record, latest } = readBatch(batchFolder(fixture));
    expect(cli.stderr).not.toMatch(/incorrect header check/);
    expect(record.status, cli.stderr).not.toBe('running');
    expect([...latest.values()].map((item) => item.status)).not.toContain('running');
    expect(latest.get(0)).toMatchObject({ status: 'error' });
  });

  it('an outcome naming another index or other parameters is recorded for its own item, each item once', async () => {
    const { fixture, cli } = await batchAgainst(2, (index) => ({
      kind: 'finished',
      // Item 0's result says it is item 1's, with other parameters.
      outcome: { ...outcomeOf(`run-${index}`, `answer ${index}`), ...(index === 0 ? { index: 1, parameters: { name: 'someone-else' } } : {}) },
      worker: rogueIdentity,
    }));
    const { lines, latest } = readBatch(batchFolder(fixture));
    expect(cli.exitCode, cli.stderr).toBe(0);
    expect(latest.get(0)).toMatchObject({ index: 0, status: 'success', answer: 'answer 0', parameters: { name: 'person-0' } });
    expect(latest.get(1)).toMatchObject({ index: 1, status: 'success', answer: 'answer 1', parameters: { name: 'person-1' } });
    expect(lines.filter((line) => line.status !== 'running').map((line) => line.index).sort()).toEqual([0, 1]);
  });

  it('an item a worker started and then skipped is not left running when the batch ends', async () => {
    const { fixture, cli } = await batchAgainst(1, async (index, job) => {
      // Started, as a worker that took it says; then handed back and skipped, as a worker does once the batch is stopped.
      await job.updateProgress({ runId: `run-${index}`, runDirectory: `/nowhere/run-${index}`, cwd: '/nowhere', worker: rogueIdentity });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return { kind: 'skipped', reason: 'the batch was stopped (interrupted)' };
    });
    const { record, lines, latest } = readBatch(batchFolder(fixture));
    expect(lines.map((line) => line.status)).toContain('running');
    expect(record.status, cli.stderr).not.toBe('running');
    expect(record.totals.running).toBe(0);
    expect(latest.get(0)!.status).not.toBe('running');
  });

  it("a resumed batch never reads into the queue a run folder a worker's progress named on the batch's machine", async () => {
    // Another run of the user's on the batch's machine, cut short, with something private in its events.
    const privateRun = fixture({ 'events.jsonl': `${JSON.stringify({ type: 'run-start', runId: 'private-run', workspace: 'workspace/private-run' })}\n${JSON.stringify({ type: 'note', text: secret })}\n` });
    const fixtureFolder = writeBatchFixture({ items: 1 });
    remove(fixtureFolder);
    const { Worker, Queue, UnrecoverableError } = await import('bullmq');
    const server = await startBatchModel({ steps: 1 });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const rogue = new Worker('manus-batch-items', async (job) => {
      await job.updateProgress({ runId: 'private-run', runDirectory: privateRun, cwd: '/nowhere', worker: rogueIdentity });
      await released;
      throw new UnrecoverableError('gone');
    }, { connection: parseQueueUrl(redis.url, {}).options, prefix: 'manus' });
    const queue = new Queue('manus-batch-items', { connection: parseQueueUrl(redis.url, {}).options, prefix: 'manus' });
    let resumed: SpawnedCli | undefined;
    try {
      const batch = spawnCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', redis.url, '--ci'], { cwd: fixtureFolder, env: batchEnvironment(server) });
      await waitFor(() => {
        try {
          return readBatch(batchFolder(fixtureFolder)).lines.some((line) => line.status === 'running');
        } catch {
          return false;
        }
      }, 30_000, 'the item running on the worker');
      // The batch's machine goes down; the worker's job fails.
      batch.child.kill('SIGKILL');
      await batch.closed;
      release();
      await rogue.close();
      const id = readBatch(batchFolder(fixtureFolder)).record.id as string;
      resumed = spawnCli(['batch', 'resume', id, '--ci'], { cwd: fixtureFolder, env: batchEnvironment(server) });
      let carried = '';
      await waitFor(() => {
        void queue.getWaiting().then((waiting) => {
          const job = waiting.find((each) => each.data.batchId === id);
          if (job) carried = job.data.resume ? gunzipSync(Buffer.from(job.data.resume.events, 'base64')).toString('utf8') : 'no resume';
        });
        return carried !== '';
      }, 20_000, "the resumed batch's job").catch(async (error) => {
        throw new Error(`${(error as Error).message}: ${resumed!.stderr()} ${JSON.stringify(await queue.getJobCounts())}`);
      });
      expect(carried).not.toContain(secret);
    } finally {
      release();
      await rogue.close();
      if (resumed) {
        resumed.child.kill('SIGKILL');
        await resumed.closed;
      }
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      await server.close();
    }
  });

  it("an outcome naming events of its own records no events outside the batch folder as the item's", async () => {
    const privateRun = fixture({ 'events.jsonl': `${JSON.stringify({ type: 'run-start', runId: 'private-run', workspace: 'workspace/private-run', task: secret })}\n` });
    const { fixture: batchFixture, cli } = await batchAgainst(1, () => ({
      kind: 'finished',
      outcome: { ...outcomeOf('run-0', 'answer 0'), runId: undefined, events: { stored: 'local', path: join(privateRun, 'events.jsonl') } },
      worker: rogueIdentity,
    }), ['--report', 'report']);
    expect(cli.exitCode, cli.stderr).toBe(0);
    const item = readBatch(batchFolder(batchFixture)).latest.get(0)!;
    const pages = readdirSync(join(batchFixture, 'report', 'manus-report-items')).map((page) => readFileSync(join(batchFixture, 'report', 'manus-report-items', page), 'utf8')).join('\n');
    expect(pages).not.toContain(secret);
    // A local events path is what the batch's reports open and render as the item's run.
    expect(item.events?.stored === 'local' ? item.events.path : 'not local', JSON.stringify(item)).not.toContain(privateRun);
  });

  it("two items whose results name the same run id never share events: the second is refused as another item's", async () => {
    const { fixture, cli } = await batchAgainst(2, (index) => ({
      kind: 'finished',
      outcome: outcomeOf('same-run', `answer ${index}`),
      worker: rogueIdentity,
      events: gzipSync(`${JSON.stringify({ type: 'run-start', runId: 'same-run', workspace: 'workspace/same-run', item: `item-${index}` })}\n`).toString('base64'),
    }));
    expect(cli.exitCode, cli.stderr).toBe(1);
    const folder = batchFolder(fixture);
    const items = [...readBatch(folder).latest.values()];
    const [recorded, refused] = [items.filter((item) => item.status === 'success'), items.filter((item) => item.status !== 'success')];
    expect([recorded.length, refused.length]).toEqual([1, 1]);
    expect(readFileSync(join(folder, recorded[0].events.path), 'utf8')).toContain(`item-${recorded[0].index}`);
    expect(refused[0]).toMatchObject({ status: 'error', error: { code: 'worker_failed' } });
    expect(refused[0].answer).toContain('which is another item');
    expect(refused[0].events).toBeUndefined();
  });
});

describe.skipIf(missing !== undefined)('what a worker continues from a job', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('an item handed back by a stopped worker, then skipped because the batch was interrupted, is not left running', async () => {
    const fixture = writeBatchFixture({ items: 1 });
    remove(fixture);
    let slow = true;
    const server = await startBatchModel({ steps: 1, override: () => (slow ? { delayMs: 30_000, content: 'never arrives' } : undefined) });
    const homes = [0, 1].map(() => realpathSync(mkdtempSync(join(tmpdir(), 'manus-worker-'))));
    remove(...homes);
    const first = startWorker(redis, server, 1, homes[0]);
    let second: SpawnedCli | undefined;
    try {
      const batch = spawnCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', redis.url, '--ci'], { cwd: fixture, env: batchEnvironment(server) });
      await waitFor(() => chatRequests(server).length >= 1, 30_000, 'the item running on the first worker');
      // The batch has heard that the item started.
      await new Promise((resolve) => setTimeout(resolve, 500));
      // The worker stops: it hands the item back to the queue, to be continued.
      first.child.kill('SIGTERM');
      await first.closed;
      // The user interrupts the batch; a worker that comes later finds it stopped and skips the item.
      batch.child.kill('SIGINT');
      await new Promise((resolve) => setTimeout(resolve, 1000));
      slow = false;
      second = startWorker(redis, server, 1, homes[1]);
      const { code } = await batch.closed;
      expect(code, batch.stderr()).toBe(130);
      const { record, latest } = readBatch(batchFolder(fixture));
      expect(latest.get(0)!.status, JSON.stringify(latest.get(0))).not.toBe('running');
      expect(record.totals.running).toBe(0);
    } finally {
      await stopWorkers([first, second]);
      await server.close();
    }
  });

  it('stops at Ctrl-C with no worker left to take back an item a stopped worker handed back: interrupted, exit 130', async () => {
    const fixture = writeBatchFixture({ items: 1 });
    remove(fixture);
    const server = await startBatchModel({ steps: 1, override: () => ({ delayMs: 30_000, content: 'never arrives' }) });
    const worker = startWorker(redis, server, 1);
    try {
      const batch = spawnCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', redis.url, '--ci'], { cwd: fixture, env: batchEnvironment(server) });
      await waitFor(() => chatRequests(server).length >= 1, 30_000, 'the item running on the worker');
      await waitFor(() => readBatch(batchFolder(fixture)).lines.some((line) => line.status === 'running'), 10_000, 'the batch to hear the item started');
      await stopWorkers([worker]);
      batch.child.kill('SIGINT');
      const { code } = await batch.closed;
      expect(code, batch.stderr()).toBe(130);
      const { record, latest } = readBatch(batchFolder(fixture));
      expect(latest.get(0)).toMatchObject({ status: 'interrupted' });
      expect(record.totals.running).toBe(0);
    } finally {
      await stopWorkers([worker]);
      await server.close();
    }
  });

  it('waits for a Redis that is not there yet, saying so, and stops at Ctrl-C with exit 130', async () => {
    const fixture = writeBatchFixture({ items: 2 });
    remove(fixture);
    const absent = await startRedis();
    await absent.stop();
    const batch = spawnCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', absent.url, '--ci'], { cwd: fixture, env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'unused', MANUS_MODEL: 'scripted-model' } });
    await waitFor(() => batch.stderr().includes('is unreachable'), 15_000, 'the batch to say Redis is away');
    batch.child.kill('SIGINT');
    const { code } = await batch.closed;
    expect(code, batch.stderr()).toBe(130);
    expect(batch.stderr()).not.toMatch(/Unhandled error event|internal error/);
    expect(JSON.parse(readFileSync(join(batchFolder(fixture), 'batch.json'), 'utf8'))).toMatchObject({ status: 'interrupted', totals: { pending: 2 } });
  });

  it("resumed on this machine, never continues an item from a worker's events: it starts it afresh and says where it resumes", async () => {
    const fixture = writeBatchFixture({ items: 1 });
    remove(fixture);
    let stalled = true;
    const server = await startBatchModel({ steps: 2, override: (_name, step) => (stalled && step === 1 ? { delayMs: 30_000, content: 'never arrives' } : undefined) });
    const worker = startWorker(redis, server, 1);
    try {
      const batch = spawnCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', redis.url, '--ci'], { cwd: fixture, env: batchEnvironment(server) });
      await waitFor(() => chatRequests(server).length >= 2, 30_000, 'the item waiting for its second step');
      batch.child.kill('SIGINT');
      expect((await batch.closed).code, batch.stderr()).toBe(130);
      await stopWorkers([worker]);
      const folder = batchFolder(fixture);
      const interrupted = readBatch(folder).latest.get(0)!;
      expect(interrupted).toMatchObject({ status: 'interrupted', events: { stored: 'local' } });
      // As a queue whose password the record could not keep: the resume runs here.
      const record = JSON.parse(readFileSync(join(folder, 'batch.json'), 'utf8'));
      writeFileSync(join(folder, 'batch.json'), JSON.stringify({ ...record, queue: record.queue.replace('redis://', 'redis://:***@') }));
      stalled = false;
      const resumed = await runCli(['batch', 'resume', record.id, '--ci'], { cwd: fixture, env: batchEnvironment(server), timeoutMs: 60_000 });
      expect(resumed.exitCode, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain('it resumes on this machine');
      const item = readBatch(folder).latest.get(0)!;
      expect(item).toMatchObject({ status: 'success', answer: 'hello person-0' });
      expect(item.runId).not.toBe(interrupted.runId);
      expect(item.worker).toBeUndefined();
    } finally {
      await stopWorkers([worker]);
      await server.close();
    }
  });

  it("a job's events naming the definition folder itself (or another run's workspace) as the workspace are not continued", async () => {
    const fixture = writeBatchFixture({ items: 2 });
    remove(fixture);
    const server = await startBatchModel({ steps: 1 });
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'manus-worker-')));
    remove(home);
    const { queue, batch, jobs: [first, second] } = await batchWaitingOnQueue(redis, server, fixture, 2);
    let worker: SpawnedCli | undefined;
    try {
      const eventsOf = (runId: string, workspace: string) => gzipSync(`${JSON.stringify({ type: 'run-start', runId, workspace, recipe: { file: 'recipe.yaml' } })}\n`).toString('base64');
      // `workspace/..` is the definition's folder, with every run's workspace, plugins and recipe in it.
      await first.updateData({ ...first.data, resume: { runId: 'crafted-root', events: eventsOf('crafted-root', 'workspace/..') } });
      await second.updateData({ ...second.data, resume: { runId: 'crafted-shared', events: eventsOf('crafted-shared', 'workspace') } });
      worker = startWorker(redis, server, 2, home);
      const { code } = await batch.closed;
      expect(code, batch.stderr()).toBe(0);
      const { latest } = readBatch(batchFolder(fixture));
      expect([latest.get(0)!.runId, latest.get(1)!.runId]).not.toContain('crafted-root');
      expect([latest.get(0)!.runId, latest.get(1)!.runId]).not.toContain('crafted-shared');
    } finally {
      await queue.close();
      await stopWorkers([worker]);
      await server.close();
    }
  });

  it("a job's progress never makes a worker continue a run outside its own runs folder", async () => {
    const fixtureFolder = writeBatchFixture({ items: 1 });
    remove(fixtureFolder);
    const server = await startBatchModel({ steps: 1 });
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'manus-worker-')));
    remove(home);
    // A run of the user's own on the worker's machine, in a project's runs folder, cut short.
    const project = fixture({});
    const otherRun = join(project, '.manus', 'runs', 'other-run');
    mkdirSync(otherRun, { recursive: true });
    const otherEvents = [
      { type: 'run-start', runId: 'other-run', workspace: 'workspace/other-run', recipe: { file: 'recipe.yaml' } },
      { type: 'message', message: { role: 'user', content: `private notes: ${secret}` } },
    ].map((event) => JSON.stringify(event)).join('\n') + '\n';
    writeFileSync(join(otherRun, 'events.jsonl'), otherEvents);
    const { queue, batch, jobs: [job] } = await batchWaitingOnQueue(redis, server, fixtureFolder, 1);
    let worker: SpawnedCli | undefined;
    const { Redis } = await import('ioredis');
    const client = new Redis(parseQueueUrl(redis.url, {}).options);
    try {
      // The worker's own materialised copy of the job's definition, as it would have after any item of the batch.
      const stored = await client.getBuffer(`manus:definition:${job.data.definitionHash}`);
      const definitionFolder = materialiseRunDefinition(JSON.parse(gunzipSync(stored!).toString('utf8')), job.data.definitionHash, join(home, 'cache', 'definitions'));
      await job.updateProgress({ runId: 'other-run', runDirectory: otherRun, cwd: definitionFolder, worker: { id: 'earlier', host: hostname(), pid: 1 } });
      worker = startWorker(redis, server, 1, home);
      const { code } = await batch.closed;
      expect(code, batch.stderr()).toBe(0);
      expect(readFileSync(join(otherRun, 'events.jsonl'), 'utf8')).toBe(otherEvents);
      expect(JSON.stringify(chatRequests(server).map((request) => request.body))).not.toContain(secret);
    } finally {
      client.disconnect();
      await queue.close();
      await stopWorkers([worker]);
      await server.close();
    }
  });

  it('two jobs carrying the same run never continue it in one run folder at once', async () => {
    const fixture = writeBatchFixture({ items: 2 });
    remove(fixture);
    const server = await startBatchModel({ steps: 2, delayMs: 300 });
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'manus-worker-')));
    remove(home);
    const { queue, batch, jobs } = await batchWaitingOnQueue(redis, server, fixture, 2);
    let worker: SpawnedCli | undefined;
    try {
      const events = gzipSync(`${JSON.stringify({ type: 'run-start', runId: 'shared-run', workspace: 'workspace/shared-run', recipe: { file: 'recipe.yaml' } })}\n`).toString('base64');
      for (const job of jobs) await job.updateData({ ...job.data, resume: { runId: 'shared-run', events } });
      worker = startWorker(redis, server, 2, home);
      const { code } = await batch.closed;
      expect(code, batch.stderr()).toBe(0);
      const { latest } = readBatch(batchFolder(fixture));
      expect(latest.get(0)!.runId, JSON.stringify([...latest.values()])).not.toBe(latest.get(1)!.runId);
    } finally {
      await queue.close();
      await stopWorkers([worker]);
      await server.close();
    }
  });
});

describe.skipIf(missing !== undefined)('a Redis that refuses what the batch enqueues', () => {
  it('ends the batch with a clear error, not an internal one, and leaves no batch running', async () => {
    const redis = await startRedis();
    const { Redis } = await import('ioredis');
    const client = new Redis(parseQueueUrl(redis.url, {}).options);
    const fixtureFolder = writeBatchFixture({ items: 3 });
    remove(fixtureFolder);
    const server = await startBatchModel({ steps: 1 });
    try {
      // Another application's key where BullMQ keeps its waiting list: every add fails.
      await client.set('manus:manus-batch-items:wait', 'not a list');
      const cli = await runCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', redis.url, '--ci', '--report', 'report'], { cwd: fixtureFolder, env: batchEnvironment(server), timeoutMs: 60_000 });
      expect(cli.exitCode).not.toBe(0);
      // CI still gets its reports, every item in them not run.
      expect(readFileSync(join(fixtureFolder, 'report', 'manus-junit.xml'), 'utf8')).toContain('tests="3"');
      expect(JSON.parse(readFileSync(join(batchFolder(fixtureFolder), 'batch.json'), 'utf8')).status, cli.stderr).not.toBe('running');
      expect(cli.stderr).not.toMatch(/internal error|    at /);
      expect(cli.stderr).toContain("did not take the batch's jobs");
      const record = JSON.parse(readFileSync(join(batchFolder(fixtureFolder), 'batch.json'), 'utf8'));
      expect(record).toMatchObject({ status: 'failure', exitCode: 1, error: { code: 'queue_failed' } });
      const shown = await runCli(['batch', 'show', record.id], { cwd: fixtureFolder, env: batchEnvironment(server) });
      expect(shown.stdout).toContain("the batch stopped: the queue's Redis at redis://127.0.0.1:");
    } finally {
      client.disconnect();
      await server.close();
      await redis.stop();
    }
  });
});
