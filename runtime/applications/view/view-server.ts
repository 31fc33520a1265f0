/**
 * `manus view --serve`: a read-only web server over the runs folder, on loopback only. It lists
 * runs and batches, serves each one's report, and follows a run in progress, pushing its steps
 * as server-sent events. It starts, stops and changes nothing. A page on another site cannot use
 * it through DNS rebinding: the Host header must name loopback (the MCP server's guard). Nothing
 * outside the runs and batches folders is served: a run or batch is named by its folder's exact
 * name, never by a path, and an item's events elsewhere are refused.
 */
import { existsSync, realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, sep } from 'node:path';
import { itemIndex, itemNumber } from '../batch/item-number.js';
import { createRequestGuard } from '../mcp-server/http-request-guard.js';
import { batchFolderNames, readBatchFolder, type BatchItem, type BatchRecord } from '../reports/batch-folder.js';
import { batchHtml, batchItemHtml, batchItemRowsHtml, batchTotalsHtml } from '../reports/batch-html-report.js';
import { headerHtml, imageReader, runHtml } from '../reports/run-html-report.js';
import { flowHtml, plansHtml, stepHtml } from '../reports/run-html-steps.js';
import { RunViewBuilder, runViewFromText } from '../reports/run-view.js';
import { eventsFileName, listRuns, parseEventLines, type RunEventRecord, type RunSummary } from '../../runs/run-history.js';
import type { SecretRedactor } from '../../services/secret-redaction.js';
import { followEvents, wholeLines } from './events-follower.js';
import { batchRowsHtml, listPageHtml, runRowsHtml } from './list-page.js';
import { liveListScript, liveRunScript } from './live-script.js';
import { liveScreenFileName, readLiveScreen, screenPageHtml } from './screen-page.js';

export const viewServerHost = '127.0.0.1';

export interface ViewServerOptions {
  runsDirectory: string;
  batchesDirectory: string;
  /** 0 picks a free port. */
  port: number;
  redactor: SecretRedactor;
  /** How often a followed events file and the list are read again. */
  pollMilliseconds?: number;
}

export interface ViewServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

const defaultPollMilliseconds = 250;
const heartbeatMilliseconds = 15_000;

class NotFound extends Error {}

export async function startViewServer(options: ViewServerOptions): Promise<ViewServer> {
  const guard = createRequestGuard({ host: viewServerHost, allowedHosts: [] });
  const streams = new Set<() => void>();
  const server = createServer((request, response) => {
    const verdict = guard(request.headers);
    if (!verdict.allowed) return sendText(response, verdict.status, verdict.message);
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      return sendText(response, 405, 'This server is read-only: GET only.');
    }
    handle(request, response, options, streams).catch((error: unknown) => {
      if (error instanceof NotFound) sendText(response, 404, error.message);
      else sendText(response, 500, `The page could not be made: ${error instanceof Error ? error.message : String(error)}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, viewServerHost, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${viewServerHost}:${port}/`,
    port,
    close: async () => {
      for (const stop of streams) stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function handle(request: IncomingMessage, response: ServerResponse, options: ViewServerOptions, streams: Set<() => void>): Promise<void> {
  const url = new URL(request.url ?? '/', `http://${viewServerHost}`);
  const segments = pathSegments(url.pathname);
  const poll = options.pollMilliseconds ?? defaultPollMilliseconds;
  if (segments.length === 0) return sendHtml(response, await listPage(options));
  if (segments.length === 1 && segments[0] === 'events') return streamList(request, response, options, streams, poll);
  if (segments[0] === 'runs' && segments.length >= 2) {
    const directory = await runFolder(options.runsDirectory, segments[1]);
    const base = `/runs/${encodeURIComponent(segments[1])}`;
    if (segments.length === 2) return sendHtml(response, await runPage(directory, base, options.redactor, { href: '/', text: 'All runs' }));
    if (segments.length === 3 && segments[2] === 'events') return streamRun(request, response, join(directory, eventsFileName), url, options.redactor, streams, poll);
    if (segments.length === 3 && segments[2] === 'screen') return sendHtml(response, screenPageHtml(segments[1], base));
    if (segments.length === 3 && segments[2] === 'screen.png') return sendScreen(response, directory);
  }
  if (segments[0] === 'batches' && segments.length >= 2) {
    const batch = await batchRecord(options.batchesDirectory, segments[1]);
    const base = `/batches/${encodeURIComponent(batch.id)}`;
    const itemHref = (item: BatchItem) => `${base}/items/${itemNumber(item.index)}`;
    if (segments.length === 2) {
      const live = batch.finishedAt === undefined ? { script: liveListScript(`${base}/events`) } : undefined;
      return sendHtml(response, await batchHtml(batch, { redactor: options.redactor, itemHref, backLink: { href: '/', text: 'All runs and batches' }, live }));
    }
    if (segments.length === 3 && segments[2] === 'events') {
      return streamChanges(request, response, streams, poll, async () => {
        const current = options.redactor.redactValue(await readBatchFolder(batch.directory));
        return { 'batch-items': batchItemRowsHtml(current, itemHref), 'batch-totals': batchTotalsHtml(current) };
      });
    }
    if (segments[2] === 'items' && segments.length >= 4) {
      const item = batchItem(batch, segments[3], options);
      const itemBase = `${base}/items/${itemNumber(item.index)}`;
      const events = item.events?.stored === 'local' ? item.events.path : undefined;
      if (segments.length === 4) {
        if (events && existsSync(events)) return sendHtml(response, await runPage(dirname(events), itemBase, options.redactor, { href: base, text: `Batch ${batch.id}` }));
        return sendHtml(response, await batchItemHtml(batch, item, { redactor: options.redactor, backLink: { href: base, text: `Batch ${batch.id}` } }));
      }
      if (segments.length === 5 && segments[4] === 'events' && events) return streamRun(request, response, events, url, options.redactor, streams, poll);
    }
  }
  throw new NotFound('Not found.');
}

/** The path's segments, decoded; a segment that could name another folder is refused outright. */
function pathSegments(pathname: string): string[] {
  let segments: string[];
  try {
    segments = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    throw new NotFound('Not found: the path is not valid.');
  }
  if (segments.some((segment) => segment === '.' || segment === '..' || /[\\/\0]/.test(segment))) throw new NotFound('Not found.');
  return segments;
}

/** A run's folder, named exactly as it is in the runs folder. */
async function runFolder(runsDirectory: string, id: string): Promise<string> {
  const run = (await servedRuns(runsDirectory)).find((candidate) => candidate.id === id);
  if (!run) throw new NotFound(`No run ${id} in the runs folder.`);
  return run.directory;
}

/** The runs of the runs folder, less any whose events file is a link elsewhere: that is no run of its own. */
async function servedRuns(runsDirectory: string): Promise<RunSummary[]> {
  return (await listRuns(runsDirectory)).filter((run) => inside(join(run.directory, eventsFileName), [run.directory]));
}

async function batchRecord(batchesDirectory: string, id: string): Promise<BatchRecord> {
  if (!(await batchFolderNames(batchesDirectory)).includes(id)) throw new NotFound(`No batch ${id} in the batches folder.`);
  return readBatchFolder(join(batchesDirectory, id));
}

/** An item by its number (from 1); its events are served only from inside the runs or batches folder. */
function batchItem(batch: BatchRecord, number: string, options: ViewServerOptions): BatchItem {
  const index = itemIndex(number);
  const item = batch.items.find((candidate) => candidate.index === index);
  if (!item) throw new NotFound(`Batch ${batch.id} has no item ${number}.`);
  if (item.events?.stored === 'local' && !inside(item.events.path, [options.runsDirectory, options.batchesDirectory])) {
    return { ...item, events: undefined };
  }
  return item;
}

function inside(path: string, folders: readonly string[]): boolean {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return false;
  }
  return folders.some((folder) => {
    try {
      const root = realpathSync(folder);
      return real.startsWith(`${root}${sep}`);
    } catch {
      return false;
    }
  });
}

async function listPage(options: ViewServerOptions): Promise<string> {
  const [runs, batches] = await Promise.all([servedRuns(options.runsDirectory), readBatches(options.batchesDirectory)]);
  return listPageHtml(options.redactor.redactValue(runs), options.redactor.redactValue(batches), options.runsDirectory);
}

async function readBatches(batchesDirectory: string): Promise<BatchRecord[]> {
  const names = await batchFolderNames(batchesDirectory);
  const batches = await Promise.all(names.map((name) => readBatchFolder(join(batchesDirectory, name)).catch(() => undefined)));
  return batches.filter((batch): batch is BatchRecord => batch !== undefined);
}

/** A run's report; while the run goes on, drawn from its whole lines, with the script that follows the rest. */
async function runPage(directory: string, base: string, redactor: SecretRedactor, backLink: { href: string; text: string }): Promise<string> {
  const { text, offset } = wholeLines(await readFile(join(directory, eventsFileName)));
  const view = runViewFromText(directory.split(sep).at(-1) ?? '', directory, text);
  const live = view.status === 'running' ? { script: liveRunScript(`${base}/events?offset=${offset}`) } : undefined;
  const screenHref = existsSync(join(directory, liveScreenFileName)) ? `${base}/screen` : undefined;
  return runHtml(view, { runDirectory: directory, redactor, backLink, live, screenHref });
}

function openStream(request: IncomingMessage, response: ServerResponse, streams: Set<() => void>, stopFollowing: () => void): (event: string, data: unknown) => void {
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', connection: 'keep-alive' });
  response.write('retry: 2000\n\n');
  const heartbeat = setInterval(() => response.write(': still here\n\n'), heartbeatMilliseconds);
  const stop = () => {
    clearInterval(heartbeat);
    stopFollowing();
    streams.delete(stop);
    response.end();
  };
  streams.add(stop);
  request.on('close', stop);
  return (event, data) => response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Follows a run's events from the offset its page was drawn to, sending each changed part. */
async function streamRun(request: IncomingMessage, response: ServerResponse, eventsFile: string, url: URL, redactor: SecretRedactor, streams: Set<() => void>, poll: number): Promise<void> {
  const text = await readFile(eventsFile);
  const asked = Number(url.searchParams.get('offset') ?? '0');
  // The offset must fall at a line's end within what is on disk; anything else starts from the file's last whole line.
  const offset = Number.isInteger(asked) && asked >= 0 && asked <= text.length && (asked === 0 || text[asked - 1] === 0x0a) ? asked : wholeLines(text).offset;
  const directory = dirname(eventsFile);
  const builder = new RunViewBuilder(directory.split(sep).at(-1) ?? '');
  builder.addAll(parseEventLines(text.subarray(0, offset).toString('utf8'), { numbered: false }).events);
  builder.takeChangedSteps();
  const images = imageReader(directory);
  let follower: { stop(): void } | undefined;
  const send = openStream(request, response, streams, () => follower?.stop());
  let flowShown = '';
  let plansShown = '';
  follower = followEvents(eventsFile, offset, (events: RunEventRecord[]) => {
    builder.addAll(events);
    // The header, tree and plans need all but the steps: redacting those again at every poll would cost a long run dearly.
    const { steps, ...rest } = builder.view();
    const view = { ...redactor.redactValue({ ...rest, steps: [] }), steps };
    for (const step of builder.takeChangedSteps()) send('step', { index: step.index, html: stepHtml(redactor.redactValue(step), images) });
    send('header', { html: headerHtml(view) });
    const firstStep = new Map<string, number>();
    for (const step of view.steps) if (step.path !== undefined && !firstStep.has(step.path)) firstStep.set(step.path, step.index);
    const flow = view.flow.length > 0 ? flowHtml(view.flow, firstStep) : '';
    if (flow !== flowShown) send('flow', { html: (flowShown = flow) });
    const plans = view.plans.length > 0 ? plansHtml(view.plans) : '';
    if (plans !== plansShown) send('plans', { html: (plansShown = plans) });
    if (view.ended) send('end', {});
  }, poll);
}

/** Sends the list's rows again whenever a run or batch comes, goes or changes. */
function streamList(request: IncomingMessage, response: ServerResponse, options: ViewServerOptions, streams: Set<() => void>, poll: number): void {
  streamChanges(request, response, streams, poll, async () => {
    const [runs, batches] = await Promise.all([servedRuns(options.runsDirectory), readBatches(options.batchesDirectory)]);
    return { runs: runRowsHtml(options.redactor.redactValue(runs)), batches: batchRowsHtml(options.redactor.redactValue(batches)) };
  });
}

/** Reads parts of a page again at each poll and sends them, by element id, when they changed. */
function streamChanges(request: IncomingMessage, response: ServerResponse, streams: Set<() => void>, poll: number, read: () => Promise<Record<string, string>>): void {
  let last: string | undefined;
  let busy = false;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      const parts = await read();
      const text = JSON.stringify(parts);
      // The first reading too: the page may have been drawn a moment before the stream opened.
      if (text !== last) send('list', parts);
      last = text;
    } catch {
      // A folder caught mid-change is read again at the next poll.
    } finally {
      busy = false;
    }
  }, Math.max(poll, 1000));
  const send = openStream(request, response, streams, () => clearInterval(timer));
}

const securityHeaders = { 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer', 'cache-control': 'no-store' };

function sendHtml(response: ServerResponse, html: string): void {
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...securityHeaders });
  response.end(html);
}

/** The run's latest screenshot; a 404 until a tool has taken one. */
async function sendScreen(response: ServerResponse, runDirectory: string): Promise<void> {
  const png = await readLiveScreen(runDirectory);
  if (!png) throw new NotFound('This run has no screen: no tool of it has taken a screenshot.');
  response.writeHead(200, { 'content-type': 'image/png', ...securityHeaders });
  response.end(png);
}

function sendText(response: ServerResponse, status: number, text: string): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...securityHeaders });
  response.end(`${text}\n`);
}
