/**
 * The served list of runs and batches, newest first, each row a link to its report, with a
 * search box over every column.
 */
import type { BatchRecord } from '../reports/batch-folder.js';
import { formatCount, formatDuration, formatLocalTime } from '../reports/display-format.js';
import { htmlPage } from '../reports/html-page.js';
import { escapeHtml } from '../reports/html-text.js';
import { statusClass } from '../reports/run-html-steps.js';
import type { RunSummary } from '../../runs/run-history.js';
import { liveListScript } from './live-script.js';

export function runRowsHtml(runs: readonly RunSummary[]): string {
  return runs.map((run) => [
    `<tr data-status="${escapeHtml(run.status)}" data-run="${escapeHtml(run.id)}">`,
    `<td><a href="/runs/${encodeURIComponent(run.id)}">${escapeHtml(run.id)}</a></td>`,
    `<td>${escapeHtml(run.recipe || '-')}</td>`,
    `<td><span class="status status-${escapeHtml(statusClass(run.status))}">${escapeHtml(run.status)}</span></td>`,
    `<td class="number" data-value="${run.steps}">${run.steps}</td>`,
    `<td class="number" data-value="${run.totalTokens}">${escapeHtml(formatCount(run.totalTokens))}</td>`,
    `<td data-value="${escapeHtml(run.started ?? '')}">${escapeHtml(formatLocalTime(run.started))}</td>`,
    `<td class="number" data-value="${run.durationMs ?? 0}">${escapeHtml(formatDuration(run.durationMs))}</td>`,
    '</tr>',
  ].join('')).join('');
}

export function batchRowsHtml(batches: readonly BatchRecord[]): string {
  return batches.map((batch) => [
    `<tr data-status="${escapeHtml(batch.status)}" data-batch="${escapeHtml(batch.id)}">`,
    `<td><a href="/batches/${encodeURIComponent(batch.id)}">${escapeHtml(batch.id)}</a></td>`,
    `<td>${escapeHtml(batch.recipe.name || '-')}</td>`,
    `<td><span class="status status-${escapeHtml(statusClass(batch.status))}">${escapeHtml(batch.status)}</span></td>`,
    `<td class="number" data-value="${batch.totals.items}">${batch.totals.items}</td>`,
    `<td class="number" data-value="${batch.totals.succeeded}">${batch.totals.succeeded}</td>`,
    `<td class="number" data-value="${batch.totals.failed}">${batch.totals.failed}</td>`,
    `<td data-value="${escapeHtml(batch.createdAt ?? '')}">${escapeHtml(formatLocalTime(batch.createdAt))}</td>`,
    '</tr>',
  ].join('')).join('');
}

export function listPageHtml(runs: readonly RunSummary[], batches: readonly BatchRecord[], runsDirectory: string): string {
  const body = [
    '<main>',
    '<h1>Runs and batches</h1>',
    `<p class="muted">${escapeHtml(runsDirectory)}: read-only; runs in progress update live.</p>`,
    '<section id="runs-section"><h2>Runs</h2>',
    '<div class="filters"><input type="search" placeholder="Search runs: id, recipe, status" aria-label="Search runs" data-filter-for="runs">',
    '<span class="muted"><span data-shown-for="runs">' + runs.length + '</span> shown</span></div>',
    '<table class="sortable" id="runs"><thead><tr><th data-sort="text">Run</th><th data-sort="text">Recipe</th><th data-sort="text">Status</th><th data-sort="number" class="number">Steps</th><th data-sort="number" class="number">Tokens</th><th data-sort="text">Started</th><th data-sort="number" class="number">Duration</th></tr></thead>',
    `<tbody>${runRowsHtml(runs)}</tbody></table>`,
    '</section>',
    '<section id="batches-section"><h2>Batches</h2>',
    '<div class="filters"><input type="search" placeholder="Search batches: id, recipe, status" aria-label="Search batches" data-filter-for="batches">',
    '<span class="muted"><span data-shown-for="batches">' + batches.length + '</span> shown</span></div>',
    '<table class="sortable" id="batches"><thead><tr><th data-sort="text">Batch</th><th data-sort="text">Recipe</th><th data-sort="text">Status</th><th data-sort="number" class="number">Items</th><th data-sort="number" class="number">Succeeded</th><th data-sort="number" class="number">Failed</th><th data-sort="text">Created</th></tr></thead>',
    `<tbody>${batchRowsHtml(batches)}</tbody></table>`,
    '</section>',
    '</main>',
  ].join('\n');
  return htmlPage({ title: 'manus runs', body, script: liveListScript('/events'), connectToServer: true });
}
