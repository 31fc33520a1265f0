/**
 * The eval's page: the models × rows table of scores, coloured, each cell linking to its runs'
 * pages; each model's mean with its interval, pass rate, pass@k and pass^k, cost per success and
 * tokens; a chart of mean score against cost per model; the baseline comparison and the gates.
 * One offline file, like every report, with a page per run beside it.
 */
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { SecretRedactor } from '../../services/secret-redaction.js';
import { htmlPage } from '../reports/html-page.js';
import { escapeHtml } from '../reports/html-text.js';
import { writeFileAtomically } from '../reports/report-file.js';
import { writeRunHtmlReport } from '../reports/run-html-report.js';
import { evalRecordFileName, type EvalItemResult, type EvalRecord, type ModelSummary } from './eval-record.js';
import { dollars } from './eval-table.js';
import { mean } from './statistics.js';

export const evalRunsFolderName = 'manus-report-runs';

/** Writes the eval's page to `outputFile`, with each run's page in `manus-report-runs/` beside it. */
export async function writeEvalHtmlReport(evalDirectory: string, outputFile: string, record: EvalRecord, options: { redactor?: SecretRedactor } = {}): Promise<string> {
  const outputDirectory = dirname(resolve(outputFile));
  const runsBase = record.runsFrom ? resolve(evalDirectory, record.runsFrom) : evalDirectory;
  const pages = new Map<number, string>();
  for (const item of record.items) {
    if (!item.runDirectory || !item.runId) continue;
    const runDirectory = resolve(runsBase, item.runDirectory);
    const events = join(runDirectory, 'events.jsonl');
    if (!existsSync(events)) continue;
    const name = `${evalRunsFolderName}/${item.runId}.html`;
    await writeRunHtmlReport(events, join(outputDirectory, name), { runDirectory, ...(options.redactor ? { redactor: options.redactor } : {}), backLink: { href: `../${basename(outputFile)}`, text: `Eval ${record.name}` } });
    pages.set(item.index, name);
  }
  const file = resolve(outputFile);
  await writeFileAtomically(file, evalHtml(options.redactor ? options.redactor.redactValue(record) : record, (item) => pages.get(item.index)));
  return file;
}

export function evalHtml(record: EvalRecord, runHref: (item: EvalItemResult) => string | undefined): string {
  const body = [
    '<main>',
    `<h1>Eval ${escapeHtml(record.name)} <span class="status status-${record.gates.some((gate) => !gate.passed) ? 'failed' : 'passed'}">${escapeHtml(record.status)}</span></h1>`,
    `<dl class="facts"><dt>id</dt><dd>${escapeHtml(record.id)}</dd><dt>recipe</dt><dd>${escapeHtml(record.recipe)}</dd><dt>models</dt><dd>${escapeHtml(record.models.join(', '))}</dd><dt>rows × repeats</dt><dd>${record.rows.length} × ${record.repeat}</dd><dt>scorers</dt><dd>${escapeHtml(record.scorers.map((scorer) => `${scorer.name} (≥ ${scorer.threshold})`).join(', '))}</dd></dl>`,
    '<h2>Models</h2>',
    summaryTable(record),
    '<h2>Score against cost</h2>',
    scoreCostChart(record.summary),
    ...(record.baseline ? ['<h2>Against the baseline</h2>', baselineHtml(record)] : []),
    ...(record.gates.length > 0 ? ['<h2>Gates</h2>', `<ul>${record.gates.map((gate) => `<li><span class="status status-${gate.passed ? 'passed' : 'failed'}">${gate.passed ? 'ok' : 'failed'}</span> ${escapeHtml(gate.gate)}: ${escapeHtml(gate.message)}</li>`).join('')}</ul>`] : []),
    '<h2>Rows</h2>',
    matrixTable(record, runHref),
    '</main>',
  ].join('\n');
  return htmlPage({ title: `Eval ${record.name}`, body: `<style>${styles}</style>\n${body}` });
}

const styles = `
table.eval { border-collapse: collapse; margin: 8px 0; font-size: 13px; }
table.eval th, table.eval td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
table.eval td.cell { text-align: center; font-variant-numeric: tabular-nums; }
td.cell.all { background: #d7f2dc; } td.cell.some { background: #fdf0c4; } td.cell.none { background: #f9d3d0; } td.cell.missing { color: var(--muted); }
td.cell a { display: inline-block; margin: 0 2px; font-size: 11px; }
`;

function percent(value: number): string {
  return `${(value * 100).toFixed(1)}%`;
}

function summaryTable(record: EvalRecord): string {
  const k = record.repeat;
  const rows = record.summary.map((summary) => `<tr><td>${escapeHtml(summary.model)}</td><td>${summary.meanScore.toFixed(3)} [${summary.meanScoreInterval.low.toFixed(3)}, ${summary.meanScoreInterval.high.toFixed(3)}]</td><td>${summary.passed}/${summary.runs} = ${percent(summary.passRate)} [${percent(summary.passRateInterval.low)}, ${percent(summary.passRateInterval.high)}]</td>${k > 1 ? `<td>${percent(summary.anyOfKPassed)}</td><td>${percent(summary.allOfKPassed)}</td>` : ''}<td>${summary.cost === undefined ? 'unknown' : dollars(summary.cost)}</td><td>${summary.costPerSuccess === undefined ? '-' : dollars(summary.costPerSuccess)}</td><td>${summary.totalTokens} (${summary.promptTokens} in, ${summary.completionTokens} out)</td></tr>`);
  const repeatHeads = k > 1 ? `<th>any of ${k} passed (pass@${k})</th><th>all of ${k} passed (pass^${k})</th>` : '';
  return `<table class="eval"><thead><tr><th>model</th><th>mean score [95% bootstrap]</th><th>passed [95% Wilson]</th>${repeatHeads}<th>cost</th><th>cost per success</th><th>tokens</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function matrixTable(record: EvalRecord, runHref: (item: EvalItemResult) => string | undefined): string {
  const head = `<tr><th>row</th>${record.models.map((model) => `<th>${escapeHtml(model)}</th>`).join('')}</tr>`;
  const rows = record.rows.map((row) => {
    const cells = record.models.map((model) => {
      const runs = record.items.filter((item) => item.row === row && item.model === model);
      if (runs.length === 0 || runs.every((run) => run.status === 'not-run')) return '<td class="cell missing">-</td>';
      const passed = runs.filter((run) => run.passed).length;
      const kind = passed === runs.length ? 'all' : passed === 0 ? 'none' : 'some';
      const reasons = runs.flatMap((run) => run.scores.filter((score) => !score.passed).map((score) => `${score.name}: ${score.reason}`));
      const links = runs.map((run) => {
        const href = runHref(run);
        return href ? `<a href="${escapeHtml(href)}" title="${escapeHtml(`${run.status}, score ${run.score.toFixed(3)}`)}">#${run.repeat}</a>` : '';
      }).join('');
      return `<td class="cell ${kind}" title="${escapeHtml(reasons.join('\n') || 'every scorer passed')}">${mean(runs.map((run) => run.score)).toFixed(2)} ${passed}/${runs.length}<br>${links}</td>`;
    });
    return `<tr><td>${escapeHtml(row)}</td>${cells.join('')}</tr>`;
  });
  return `<table class="eval"><thead>${head}</thead><tbody>${rows.join('')}</tbody></table>`;
}

function baselineHtml(record: EvalRecord): string {
  const baseline = record.baseline!;
  const rows = baseline.models.map((entry) => `<tr><td>${escapeHtml(entry.model)}</td><td>${entry.baselineMean.toFixed(3)}</td><td>${entry.currentMean.toFixed(3)}</td><td>${entry.comparison.difference >= 0 ? '+' : ''}${entry.comparison.difference.toFixed(3)} [${entry.comparison.interval.low.toFixed(3)}, ${entry.comparison.interval.high.toFixed(3)}]</td><td>${entry.comparison.newlyFailed} / ${entry.comparison.newlyPassed} (p = ${entry.comparison.mcnemarP.toFixed(3)})</td><td>${escapeHtml(entry.worseRows.join(', ') || '-')}</td><td>${escapeHtml(entry.betterRows.join(', ') || '-')}</td></tr>`);
  return `<p>Baseline: ${escapeHtml(baseline.file)}</p><table class="eval"><thead><tr><th>model</th><th>baseline</th><th>now</th><th>difference [95% paired bootstrap]</th><th>newly failed / passed (McNemar)</th><th>rows worse</th><th>rows better</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** The eval folder `target` names: a folder holding eval.json, or an eval's id (or a unique prefix of one) in `evalsDirectory`. */
export function evalFolderFor(evalsDirectory: string, target: string): string | undefined {
  if (existsSync(join(target, evalRecordFileName))) return resolve(target);
  if (!existsSync(evalsDirectory)) return undefined;
  const names = readdirSync(evalsDirectory).filter((name) => existsSync(join(evalsDirectory, name, evalRecordFileName)));
  if (names.includes(target)) return join(evalsDirectory, target);
  const matches = names.filter((name) => name.startsWith(target));
  return matches.length === 1 ? join(evalsDirectory, matches[0]) : undefined;
}

/** A scatter of each model's mean score (with its interval) against its cost, drawn as inline SVG. */
function scoreCostChart(summaries: readonly ModelSummary[]): string {
  const width = 480;
  const height = 260;
  const left = 48;
  const bottom = 36;
  const plotWidth = width - left - 16;
  const plotHeight = height - bottom - 16;
  const costs = summaries.map((summary) => summary.cost ?? 0);
  const maxCost = Math.max(...costs, 1e-9);
  const x = (cost: number) => left + (cost / maxCost) * plotWidth * 0.9 + plotWidth * 0.05;
  const y = (score: number) => 16 + (1 - score) * plotHeight;
  const colours = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2'];
  const points = summaries.map((summary, index) => {
    const colour = colours[index % colours.length];
    const cx = x(summary.cost ?? 0);
    return `<line x1="${cx}" x2="${cx}" y1="${y(summary.meanScoreInterval.high)}" y2="${y(summary.meanScoreInterval.low)}" stroke="${colour}" stroke-width="2"/><circle cx="${cx}" cy="${y(summary.meanScore)}" r="5" fill="${colour}"/><text x="${cx + 8}" y="${y(summary.meanScore) + 4}" font-size="11">${escapeHtml(summary.model)}${summary.cost === undefined ? ' (cost unknown)' : ''}</text>`;
  });
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((tick) => `<line x1="${left}" x2="${width - 16}" y1="${y(tick)}" y2="${y(tick)}" stroke="#e5e7eb"/><text x="${left - 6}" y="${y(tick) + 4}" font-size="10" text-anchor="end">${tick}</text>`);
  return `<figure class="chart"><svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="mean score against cost per model">${ticks.join('')}<line x1="${left}" x2="${width - 16}" y1="${16 + plotHeight}" y2="${16 + plotHeight}" stroke="#6b7280"/><text x="${left + plotWidth / 2}" y="${height - 8}" font-size="11" text-anchor="middle">cost in US dollars (0 to ${dollars(maxCost)})</text>${points.join('')}</svg><figcaption>Mean score with its 95% interval, against the model's total cost.</figcaption></figure>`;
}
