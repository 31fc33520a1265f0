/**
 * A batch as HTML: totals, a histogram of how long items took, and the items as a table that
 * sorts and filters, each linking to its own run's report. An item whose events stayed on a
 * worker gets a page with its result and where its events are. Written as one folder: the batch's
 * page and, beside it, `manus-report-items/` with a page per item, so the folder can be kept whole.
 */
import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { SecretRedactor } from '../../services/secret-redaction.js';
import { itemNumber } from '../batch/item-number.js';
import { readBatchFolder, type BatchItem, type BatchRecord } from './batch-folder.js';
import { formatCount, formatDuration, formatLocalTime } from './display-format.js';
import { htmlPage } from './html-page.js';
import { escapeHtml, previewText } from './html-text.js';
import { writeFileAtomically } from './report-file.js';
import { durationHistogram } from './report-charts.js';
import { runHtml } from './run-html-report.js';
import { statusClass } from './run-html-steps.js';
import { loadRunView } from './run-view.js';

export const batchItemsFolderName = 'manus-report-items';

const answerExcerptCharacters = 160;

export interface BatchHtmlOptions {
  redactor?: SecretRedactor;
  /** The link from the batch's page to an item's report. */
  itemHref: (item: BatchItem) => string;
  backLink?: { href: string; text: string };
  /** A served page's script that puts new items in place as the batch goes on. */
  live?: { script: string };
}

export interface WrittenBatchReport {
  file: string;
  /** The item pages written beside it. */
  items: string[];
}

/** Writes the batch's page to `outputFile` and each item's page into `manus-report-items/` beside it. */
export async function writeBatchHtmlReport(batchDirectory: string, outputFile: string, options: { redactor?: SecretRedactor } = {}): Promise<WrittenBatchReport> {
  const batch = await readBatchFolder(batchDirectory);
  const output = resolve(outputFile);
  const itemsFolder = join(dirname(output), batchItemsFolderName);
  const itemFile = (item: BatchItem) => `item-${itemNumber(item.index)}.html`;
  const items: string[] = [];
  for (const item of batch.items) {
    const file = join(itemsFolder, itemFile(item));
    await writeFileAtomically(file, await batchItemHtml(batch, item, { redactor: options.redactor, outputDirectory: itemsFolder, backLink: { href: `../${encodeURIComponent(basename(output))}`, text: `Batch ${batch.id}` } }));
    items.push(file);
  }
  await writeFileAtomically(output, await batchHtml(batch, { redactor: options.redactor, itemHref: (item) => `${batchItemsFolderName}/${itemFile(item)}` }));
  return { file: output, items };
}

/** An item's page: its run's report when its events are here, else its result and where its events are. */
export async function batchItemHtml(batch: BatchRecord, item: BatchItem, options: { redactor?: SecretRedactor; outputDirectory?: string; backLink?: { href: string; text: string }; live?: { script: string } }): Promise<string> {
  const events = item.events?.stored === 'local' ? item.events.path : undefined;
  if (events && existsSync(events)) {
    const view = await loadRunView(events);
    return runHtml(view, { runDirectory: dirname(events), redactor: options.redactor, workspace: itemWorkspace(batch, item), outputDirectory: options.outputDirectory, backLink: options.backLink, live: options.live });
  }
  const shown = options.redactor ? options.redactor.redactValue(item) : item;
  const where = shown.events?.stored === 'worker'
    ? `The item's events stayed on the worker${shown.worker?.host ? ` ${shown.worker.host}` : ''}${shown.worker?.id ? ` (${shown.worker.id})` : ''}, at ${shown.events.path}.`
    : `The item's events are not here${shown.events ? ` (expected at ${shown.events.path})` : ''}.`;
  const facts: Array<[string, string]> = [
    ['Batch', batch.id],
    ['Item', String(itemNumber(shown.index))],
    ['Run', shown.runId ?? '-'],
    ['Status', shown.status],
    ['Exit code', shown.exitCode === undefined ? '-' : String(shown.exitCode)],
    ['Duration', formatDuration(shown.durationMs)],
    ['Tokens', formatCount(shown.totalTokens)],
    ...(shown.cost === undefined ? [] : [['Cost', `$${shown.cost.toFixed(4)}`] as [string, string]]),
    ['Parameters', JSON.stringify(shown.parameters)],
  ];
  const body = [
    '<main>',
    options.backLink ? `<p><a href="${escapeHtml(options.backLink.href)}">${escapeHtml(options.backLink.text)}</a></p>` : '',
    `<h1>${escapeHtml(batch.recipe.name || batch.id)}, item ${itemNumber(shown.index)} <span class="status status-${escapeHtml(statusClass(shown.status))}">${escapeHtml(shown.status)}</span></h1>`,
    `<p class="note" id="events-location">${escapeHtml(where)}</p>`,
    `<dl class="facts">${facts.map(([term, value]) => `<dt>${escapeHtml(term)}</dt><dd>${escapeHtml(value)}</dd>`).join('')}</dl>`,
    shown.error ? `<pre class="answer failed">${escapeHtml(`${shown.error.code}: ${shown.error.message}`)}</pre>` : '',
    `<h3>Answer</h3><pre class="answer${shown.status === 'success' ? '' : ' failed'}">${escapeHtml(shown.answer)}</pre>`,
    '</main>',
  ].join('\n');
  return htmlPage({ title: `${batch.recipe.name || batch.id} item ${itemNumber(shown.index)} - ${shown.status}`, body });
}

/**
 * Where an item's run wrote its files: its recorded workspace, from the folder the batch ran in. A
 * run on a worker recorded the worker's workspace, which names nothing here to link or read.
 */
function itemWorkspace(batch: BatchRecord, item: BatchItem): (recorded: string) => string | undefined {
  return (recorded) => (item.worker === undefined && batch.cwd !== undefined ? resolve(batch.cwd, recorded) : undefined);
}

export async function batchHtml(record: BatchRecord, options: BatchHtmlOptions): Promise<string> {
  const batch = options.redactor ? options.redactor.redactValue(record) : record;
  const histogram = await durationHistogram(batch.items.map((item) => item.durationMs).filter((duration): duration is number => duration !== undefined));
  const { totals } = batch;
  const facts: Array<[string, string]> = [
    ['Batch', escapeHtml(batch.id)],
    ['Recipe', `${escapeHtml(batch.recipe.name || '-')}${batch.recipe.file ? ` <span class="muted">(${escapeHtml(batch.recipe.file)})</span>` : ''}`],
    ['Inputs', escapeHtml(`${batch.inputs?.file ?? '-'}${batch.inputs?.count === undefined ? '' : `, ${batch.inputs.count} items`}`)],
    ['Status', `<span class="status status-${escapeHtml(statusClass(batch.status))}">${escapeHtml(batch.status)}</span>`],
    ['Exit code', batch.exitCode === undefined ? '-' : String(batch.exitCode)],
    ['Created', escapeHtml(formatLocalTime(batch.createdAt))],
    ['Finished', escapeHtml(batch.finishedAt ? formatLocalTime(batch.finishedAt) : 'not yet')],
    ['Duration', escapeHtml(formatDuration(totals.durationMs))],
    // On a queue, each worker runs as many items at once as it was started with.
    ...(batch.queue ? [['Queue', escapeHtml(batch.queue)] as [string, string]] : [['Concurrency', batch.concurrency === undefined ? '-' : String(batch.concurrency)] as [string, string]]),
    ['Items', `<span id="batch-totals">${batchTotalsHtml(batch)}</span>`],
    ['Tokens', `${escapeHtml(formatCount(totals.totalTokens))} <span class="muted">(${escapeHtml(formatCount(totals.promptTokens))} prompt, ${escapeHtml(formatCount(totals.completionTokens))} completion)</span>`],
    ...(totals.cost === undefined ? [] : [['Cost', `$${totals.cost.toFixed(4)}`] as [string, string]]),
  ];
  const statuses = [...new Set(batch.items.map((item) => item.status))].sort();
  const rows = batch.items.map((item) => itemRow(item, options.itemHref(item)));
  const body = [
    '<main>',
    options.backLink ? `<p><a href="${escapeHtml(options.backLink.href)}">${escapeHtml(options.backLink.text)}</a></p>` : '',
    `<h1>${escapeHtml(batch.recipe.name || batch.id)} <span class="status status-${escapeHtml(statusClass(batch.status))}">${escapeHtml(batch.status)}</span></h1>`,
    `<dl class="facts">${facts.map(([term, value]) => `<dt>${escapeHtml(term)}</dt><dd>${value}</dd>`).join('')}</dl>`,
    histogram ? `<section id="charts"><h2>Durations</h2><div class="charts"><figure class="chart" data-chart="${histogram.name}">${histogram.svg}<figcaption>${escapeHtml(histogram.caption)}</figcaption></figure></div></section>` : '',
    '<section id="items"><h2>Items</h2>',
    '<div class="filters">',
    '<input type="search" placeholder="Filter items: any text in a row" aria-label="Filter items" data-filter-for="batch-items">',
    `<select aria-label="Status" data-filter-for="batch-items"><option value="">every status</option>${statuses.map((status) => `<option value="${escapeHtml(status)}">${escapeHtml(status)}</option>`).join('')}</select>`,
    `<span class="muted"><span data-shown-for="batch-items">${rows.length}</span> shown</span>`,
    '</div>',
    '<table class="sortable" id="batch-items"><thead><tr>',
    '<th data-sort="number" class="number">#</th><th data-sort="text">Status</th><th data-sort="text">Parameters</th><th data-sort="number" class="number">Duration</th><th data-sort="number" class="number">Tokens</th><th data-sort="number" class="number">Cost</th><th data-sort="text">Answer</th><th>Report</th>',
    `</tr></thead><tbody>${rows.join('')}</tbody></table>`,
    '</section>',
    batch.warnings.length > 0 ? `<section id="notes"><h2>Notes</h2>${batch.warnings.map((warning) => `<div class="note">${escapeHtml(warning)}</div>`).join('')}</section>` : '',
    '</main>',
  ].join('\n');
  return htmlPage({ title: `${batch.recipe.name || batch.id} - batch ${batch.id} - ${batch.status}`, body, script: options.live?.script, connectToServer: options.live !== undefined });
}

/** How many items there are and how they stand; the batch is redacted already. */
export function batchTotalsHtml(batch: BatchRecord): string {
  const { totals } = batch;
  return escapeHtml(`${totals.items} in all: ${totals.succeeded} succeeded, ${totals.failed} failed${totals.running ? `, ${totals.running} running` : ''}${totals.pending ? `, ${totals.pending} pending` : ''}`);
}

/** The items' rows of the table; the batch is redacted already. */
export function batchItemRowsHtml(batch: BatchRecord, itemHref: (item: BatchItem) => string): string {
  return batch.items.map((item) => itemRow(item, itemHref(item))).join('');
}

function itemRow(item: BatchItem, href: string): string {
  const parameters = Object.entries(item.parameters).map(([name, value]) => `${name}=${typeof value === 'string' ? value : JSON.stringify(value)}`).join(', ');
  const failedChecks = item.checks.filter((check) => !check.passed && !check.skipped);
  const answer = item.error ? `${item.error.code}: ${item.error.message}` : item.answer;
  const where = item.events?.stored === 'worker' ? ` <span class="muted">(events on ${escapeHtml(item.worker?.host ?? 'a worker')})</span>` : '';
  return [
    `<tr data-status="${escapeHtml(item.status)}" data-item="${itemNumber(item.index)}">`,
    `<td class="number" data-value="${itemNumber(item.index)}">${itemNumber(item.index)}</td>`,
    `<td><span class="status status-${escapeHtml(statusClass(item.status))}">${escapeHtml(item.status)}</span>${failedChecks.length > 0 ? `<div class="flow-reason">failed: ${escapeHtml(failedChecks.map((check) => check.name).join(', '))}</div>` : ''}</td>`,
    `<td>${escapeHtml(previewText(parameters, 120))}</td>`,
    `<td class="number" data-value="${item.durationMs ?? 0}">${escapeHtml(formatDuration(item.durationMs))}</td>`,
    `<td class="number" data-value="${item.totalTokens}">${escapeHtml(formatCount(item.totalTokens))}</td>`,
    `<td class="number" data-value="${item.cost ?? 0}">${item.cost === undefined ? '-' : `$${item.cost.toFixed(4)}`}</td>`,
    `<td>${escapeHtml(previewText(answer, answerExcerptCharacters))}</td>`,
    `<td><a class="item-report" href="${escapeHtml(href)}">report</a>${where}</td>`,
    '</tr>',
  ].join('');
}
