/**
 * A run as one self-contained HTML page (`manus-report.html`): the header, charts of tokens, cost
 * and time per step, the plan, the flow's tree, the timeline of steps with every model and tool
 * call, the screenshots the model was shown, checks and files. Built from the events file alone.
 * Every string is redacted with the secrets known here (events are redacted when written; this
 * catches runs recorded without them) and escaped; images are inlined as data URLs.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { SecretRedactor } from '../../services/secret-redaction.js';
import { describeCacheHits } from '../../contract/token-usage.js';
import { formatCount, formatDuration, formatLocalTime } from './display-format.js';
import { htmlPage } from './html-page.js';
import { escapeHtml } from './html-text.js';
import { writeFileAtomically } from './report-file.js';
import { runCharts, type ReportChart } from './report-charts.js';
import { flowHtml, plansHtml, statusClass, stepHtml, toolTime, type ImageSource } from './run-html-steps.js';
import { loadRunView, type CheckRoundView, type RunView } from './run-view.js';
import { isImageFile, workspaceImage } from './workspace-images.js';

export const htmlReportFileName = 'manus-report.html';

export interface RunHtmlOptions {
  /** The run folder, which holds the images the model was shown. */
  runDirectory: string;
  redactor?: SecretRedactor;
  /**
   * The run's workspace, for links to the files it produced, or how to find it from the recorded
   * one, which is relative to the folder the run started in.
   */
  workspace?: string | ((recorded: string) => string | undefined);
  /** Where the page will be, so links to files are relative to it; no links without it. */
  outputDirectory?: string;
  /** A live view's script, and leave to connect back to the server. */
  live?: { script: string };
  /** Shown above the header: a link back to a list, for a served page. */
  backLink?: { href: string; text: string };
  /** Where a served page shows the run's live screen, when a tool of the run took screenshots. */
  screenHref?: string;
}

/** Writes the HTML report of the run whose events are in `eventsFile` to `outputFile`, and returns the file. */
export async function writeRunHtmlReport(eventsFile: string, outputFile: string, options: Omit<RunHtmlOptions, 'outputDirectory'>): Promise<string> {
  const view = await loadRunView(eventsFile);
  const output = resolve(outputFile);
  await writeFileAtomically(output, await runHtml(view, { ...options, outputDirectory: join(output, '..') }));
  return output;
}

export async function runHtml(view: RunView, options: RunHtmlOptions): Promise<string> {
  const run = options.redactor ? options.redactor.redactValue(view) : view;
  const images = imageReader(options.runDirectory);
  const charts = await runCharts(
    run.steps.map((step) => ({ index: step.index, totalTokens: step.usage?.totalTokens ?? 0, cost: step.cost, modelMs: step.modelDurationMs ?? 0, toolsMs: toolTime(step) })),
    run.budgets,
  );
  const firstStep = new Map<string, number>();
  for (const step of run.steps) if (step.path !== undefined && !firstStep.has(step.path)) firstStep.set(step.path, step.index);
  const sections: string[] = [];
  const nav: Array<[string, string]> = [];
  const section = (id: string, title: string, body: string, count?: number) => {
    nav.push([id, title]);
    const heading = count === undefined ? escapeHtml(title) : `${escapeHtml(title)} (<span id="${id}-count">${count}</span>)`;
    sections.push(`<section id="${id}"><h2>${heading}</h2>${body}</section>`);
  };
  if (charts.length > 0) section('charts', 'Charts', chartsHtml(charts));
  if (run.plans.length > 0) section('plan', 'Plan', `<div id="plans">${plansHtml(run.plans)}</div>`);
  if (run.flow.length > 0) section('flow', 'Flow', `<div id="flow-tree">${flowHtml(run.flow, firstStep)}</div>`);
  section('timeline', 'Steps', timelineHtml(run, images), run.steps.length);
  if (run.checks.length > 0) section('checks', 'Checks', checksHtml(run.checks));
  section('files', 'Files', filesHtml(run, options));
  if (run.notes.length > 0 || run.warnings.length > 0) section('notes', 'Notes', notesHtml(run));
  const body = [
    '<main>',
    options.backLink ? `<p><a href="${escapeHtml(options.backLink.href)}">${escapeHtml(options.backLink.text)}</a></p>` : '',
    options.screenHref ? `<p><a href="${escapeHtml(options.screenHref)}">The run's screen, live</a></p>` : '',
    `<header id="run-header">${headerHtml(run)}</header>`,
    `<nav class="sections">${nav.map(([id, title]) => `<a href="#${id}">${escapeHtml(title)}</a>`).join('')}</nav>`,
    ...sections,
    '</main>',
  ].join('\n');
  return htmlPage({
    title: `${run.recipe.name || run.runId} - ${run.status} - manus run ${run.runId}`,
    body,
    script: options.live?.script,
    connectToServer: options.live !== undefined,
  });
}

export function headerHtml(run: RunView): string {
  const facts: Array<[string, string]> = [
    ['Run', escapeHtml(run.runId)],
    ['Recipe', `${escapeHtml(run.recipe.name || '-')}${run.recipe.file ? ` <span class="muted">(${escapeHtml(run.recipe.file)})</span>` : ''}`],
  ];
  const parameters = Object.entries(run.parameters);
  if (parameters.length > 0) facts.push(['Parameters', parameters.map(([name, value]) => `<div><strong>${escapeHtml(name)}</strong> = ${escapeHtml(typeof value === 'string' ? value : JSON.stringify(value))}</div>`).join('')]);
  const isFlow = run.flow.length > 0 || (run.agent ?? '').endsWith('(flow)');
  if (run.agent) facts.push([isFlow ? 'Flow' : 'Agent', escapeHtml(run.agent)]);
  if (run.model?.model) facts.push(['Model', `${escapeHtml(run.model.model)}${run.model.profile ? ` <span class="muted">(profile ${escapeHtml(run.model.profile)}${run.model.provider ? `, ${escapeHtml(run.model.provider)}` : ''})</span>` : ''}`]);
  facts.push(['Status', `<span class="status status-${escapeHtml(statusClass(run.status))}" id="run-status">${escapeHtml(run.status)}</span>${run.exhaustedBudget ? ` the ${escapeHtml(run.exhaustedBudget)} budget ran out` : ''}`]);
  if (run.exitCode !== undefined) facts.push(['Exit code', String(run.exitCode)]);
  facts.push(['Started', escapeHtml(formatLocalTime(run.startedAt))]);
  // A run still going lasts until now, not until its last event: a live page counts on from its start.
  const going = !run.ended && run.startedAt !== undefined;
  facts.push(['Duration', `<span id="run-duration"${going ? ` data-started-at="${escapeHtml(run.startedAt!)}"` : ''}>${escapeHtml(formatDuration(run.durationMs))}</span>`]);
  facts.push(['Steps', `<span id="run-steps">${run.steps.length}</span>${run.budgets.steps ? ` <span class="muted">of ${run.budgets.steps}</span>` : ''}`]);
  const cacheHits = describeCacheHits(run.usage);
  facts.push(['Tokens', `${escapeHtml(formatCount(run.usage.totalTokens))} <span class="muted">(${escapeHtml(formatCount(run.usage.promptTokens))} prompt, ${escapeHtml(formatCount(run.usage.completionTokens))} completion${cacheHits ? `; ${escapeHtml(cacheHits)}` : ''})${run.budgets.tokens ? `, budget ${escapeHtml(formatCount(run.budgets.tokens))}` : ''}</span>`]);
  facts.push(['Cost', `${run.cost === undefined ? 'unknown <span class="muted">(no price for the model: add price: to its profile)</span>' : `$${run.cost.toFixed(4)}`}${run.budgets.cost !== undefined ? ` <span class="muted">budget $${run.budgets.cost}</span>` : ''}`]);
  if (run.attempts !== undefined && run.attempts > 1) facts.push(['Attempts', String(run.attempts)]);
  const parts = [
    `<h1>${escapeHtml(run.recipe.name || run.runId)} <span class="status status-${escapeHtml(statusClass(run.status))}">${escapeHtml(run.status)}</span></h1>`,
    `<dl class="facts">${facts.map(([term, value]) => `<dt>${term}</dt><dd>${value}</dd>`).join('')}</dl>`,
  ];
  if (run.task) parts.push(`<details><summary>Task</summary><pre>${escapeHtml(run.task)}</pre></details>`);
  if (run.error) parts.push(`<pre class="answer failed">${escapeHtml(`${run.error.code}: ${run.error.message}`)}</pre>`);
  if (run.answer !== undefined) parts.push(`<h3>Answer</h3><pre class="answer${run.status === 'success' ? '' : ' failed'}" id="run-answer">${escapeHtml(run.answer)}</pre>`);
  return parts.join('');
}

function chartsHtml(charts: readonly ReportChart[]): string {
  // The SVG is Vega's own output from numbers only; nothing in it came from the run.
  return `<div class="charts">${charts.map((chart) => `<figure class="chart" data-chart="${chart.name}">${chart.svg}<figcaption>${escapeHtml(chart.caption)}</figcaption></figure>`).join('')}</div>`;
}

function timelineHtml(run: RunView, images: ImageSource): string {
  const controls = run.steps.length === 0 ? '' : [
    '<div class="filters">',
    '<input type="search" placeholder="Filter steps: any text in a step" aria-label="Filter steps" data-filter-steps>',
    '<label><input type="checkbox" data-errors-only> only steps with a failed tool call</label>',
    '<button type="button" data-details="open">Open all tool calls</button> <button type="button" data-details="close">Close all</button>',
    '</div>',
  ].join('');
  const empty = run.steps.length === 0 ? '<p class="muted" id="no-steps">No step was recorded.</p>' : '';
  return `${controls}${empty}<ol class="timeline" id="steps">${run.steps.map((step) => stepHtml(step, images)).join('\n')}</ol>`;
}

function checksHtml(rounds: readonly CheckRoundView[]): string {
  return rounds.map((round) => {
    const rows = round.results.map((check) => {
      const verdict = check.skipped ? 'skipped' : check.passed ? 'passed' : 'failed';
      return [
        `<tr class="check-${verdict}" data-status="${verdict}">`,
        `<td>${escapeHtml(check.name)}</td>`,
        `<td>${escapeHtml(check.kind)}</td>`,
        `<td><span class="status status-${verdict}">${verdict}</span></td>`,
        `<td class="number">${escapeHtml(formatDuration(check.durationMs))}</td>`,
        `<td><pre>${escapeHtml(check.detail)}</pre></td>`,
        '</tr>',
      ].join('');
    });
    const title = rounds.length > 1 ? `<h3>Attempt ${round.attempt}</h3>` : '';
    return `${title}<table class="checks"><thead><tr><th>Check</th><th>Kind</th><th>Result</th><th class="number">Time</th><th>Output</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
  }).join('');
}

function filesHtml(run: RunView, options: RunHtmlOptions): string {
  if (run.files.length === 0) return '<p class="muted">The run reported no files.</p>';
  const workspace = typeof options.workspace === 'function' ? (run.workspace ? options.workspace(run.workspace) : undefined) : options.workspace ?? run.workspace;
  const local = workspace !== undefined && isAbsolute(workspace) ? workspace : undefined;
  const items = run.files.map((file) => {
    const href = options.outputDirectory && local ? fileHref(options.outputDirectory, local, file) : undefined;
    return `<li>${href ? `<a href="${escapeHtml(href)}">${escapeHtml(file)}</a>` : escapeHtml(file)}</li>`;
  });
  // The charts and pictures a run made are what a reader looks for first: shown, not only linked.
  const images = local ? run.files.filter(isImageFile).flatMap((file) => {
    const source = workspaceImage(local, file);
    return source ? [`<figure class="file-image"><img src="${escapeHtml(source)}" alt="${escapeHtml(file)}"><figcaption>${escapeHtml(file)}</figcaption></figure>`] : [];
  }) : [];
  const where = workspace ? `<p class="muted">In the workspace ${escapeHtml(workspace)}</p>` : '';
  return `${where}<ul class="files">${items.join('')}</ul>${images.join('')}`;
}

/** A relative link from the page to a workspace file; none for a path that leaves the workspace. */
function fileHref(outputDirectory: string, workspace: string, file: string): string | undefined {
  const target = resolve(workspace, file);
  if (target !== workspace && !target.startsWith(`${workspace}${sep}`)) return undefined;
  return relative(outputDirectory, target).split(sep).map(encodeURIComponent).join('/');
}

function notesHtml(run: RunView): string {
  return [...run.warnings.map((warning) => `Warning: ${warning}`), ...run.notes].map((note) => `<div class="note">${escapeHtml(note)}</div>`).join('');
}

/** Images from the run folder as data URLs; a name that leads out of the folder, by path or link, reads as missing. */
export function imageReader(runDirectory: string): ImageSource {
  return (file, mimeType) => {
    try {
      const folder = realpathSync(runDirectory);
      const path = realpathSync(resolve(folder, file));
      if (!path.startsWith(`${folder}${sep}`)) return undefined;
      return `data:${mimeType};base64,${readFileSync(path).toString('base64')}`;
    } catch {
      return undefined;
    }
  };
}
