/**
 * The parts of a run's HTML report that a live view sends again as they change: one step of the
 * timeline, the flow tree and the plans. Every string from the run is escaped here.
 */
import { formatCount, formatDuration } from './display-format.js';
import { escapeHtml, previewText } from './html-text.js';
import type { FlowTreeNode } from './flow-tree.js';
import type { PlanView, StepView, ToolCallView } from './run-view.js';

/** Reads an image the model was shown, as a data URL; undefined when its file is gone. */
export type ImageSource = (file: string, mimeType: string) => string | undefined;

const previewCharacters = 160;
const imageTypes = new Set(['image/png', 'image/jpeg', 'image/webp', 'image/gif']);

export function stepHtml(step: StepView, images: ImageSource): string {
  const facts: string[] = [];
  if (step.path !== undefined) facts.push(`<span class="step-path">${escapeHtml(step.path)}</span>`);
  facts.push(`<span class="muted">agent step ${step.step}</span>`);
  if (step.durationMs !== undefined) facts.push(`<span class="step-duration">${escapeHtml(formatDuration(step.durationMs))}</span>`);
  else facts.push('<span class="live">running</span>');
  if (step.modelDurationMs !== undefined) facts.push(`<span>model ${escapeHtml(formatDuration(step.modelDurationMs))}${step.modelAttempts && step.modelAttempts > 1 ? ` (${step.modelAttempts} attempts)` : ''}</span>`);
  if (step.usage) facts.push(`<span class="step-tokens" title="prompt ${step.usage.promptTokens}, completion ${step.usage.completionTokens}">${escapeHtml(formatCount(step.usage.totalTokens))} tokens</span>`);
  if (step.cost !== undefined) facts.push(`<span>$${step.cost.toFixed(4)}</span>`);
  const toolsMs = toolTime(step);
  if (step.toolCalls.length > 0) facts.push(`<span>tools ${escapeHtml(formatDuration(toolsMs))}</span>`);
  if (step.ending && step.ending !== 'continue') facts.push(`<span class="status status-${escapeHtml(statusClass(step.ending))}">${escapeHtml(step.ending)}</span>`);
  const parts = [
    `<li class="step ending-${escapeHtml(statusClass(step.ending ?? 'running'))}" id="step-${step.index}" data-step="${step.index}"${step.toolCalls.some((call) => call.isError) ? ' data-error=""' : ''}>`,
    `<div class="step-head"><a class="step-number" href="#step-${step.index}">Step ${step.index}</a>${facts.join('')}</div>`,
  ];
  for (const note of step.before) parts.push(`<div class="note">${escapeHtml(note)}</div>`);
  if (step.reasoning?.trim()) parts.push(`<details class="reasoning"><summary class="muted">Reasoning</summary><div class="assistant">${escapeHtml(step.reasoning.trim())}</div></details>`);
  if (step.content?.trim()) parts.push(`<div class="assistant">${escapeHtml(step.content.trim())}</div>`);
  for (const call of step.toolCalls) parts.push(toolCallHtml(call));
  for (const image of step.images) parts.push(imageHtml(step, image.file, image.mimeType, image.source, images));
  for (const note of step.notes) parts.push(`<div class="note">${escapeHtml(note)}</div>`);
  parts.push('</li>');
  return parts.join('');
}

/** Time spent in tools: calls that ran at once count once, as their longest. */
export function toolTime(step: StepView): number {
  if (step.toolCalls.length === 0) return 0;
  const durations = step.toolCalls.map((call) => call.durationMs ?? 0);
  const total = durations.reduce((sum, value) => sum + value, 0);
  // The step's own time bounds what its tools took, whether they ran in turn or at once.
  const bound = step.durationMs === undefined ? total : Math.max(0, step.durationMs - (step.modelDurationMs ?? 0));
  return Math.min(total, Math.max(bound, Math.max(...durations)));
}

function toolCallHtml(call: ToolCallView): string {
  const ended = call.result !== undefined;
  const outcome = call.skipped ? 'skipped' : !ended ? 'running' : call.isError ? 'error' : 'ok';
  const summary = [
    `<span class="tool-name">${escapeHtml(call.tool)}</span>`,
    call.durationMs === undefined ? '' : `<span class="tool-duration">${escapeHtml(formatDuration(call.durationMs))}</span>`,
    `<span class="tool-outcome tool-outcome-${outcome}">${outcome}</span>`,
    `<span class="tool-preview">${escapeHtml(previewText(call.result ?? call.arguments, previewCharacters))}</span>`,
  ].join('');
  const body = [
    '<h3>Arguments</h3>',
    `<pre class="tool-arguments">${escapeHtml(call.arguments)}</pre>`,
    ended ? `<h3>Result${call.truncated ? ' <span class="muted">(shortened for the model)</span>' : ''}</h3><pre class="tool-result">${escapeHtml(call.result ?? '')}</pre>` : '',
    call.files.length > 0 ? `<div class="muted">Files: ${escapeHtml(call.files.join(', '))}</div>` : '',
  ].join('');
  return `<details class="tool-call${call.isError ? ' tool-error' : ''}" data-tool="${escapeHtml(call.tool)}"><summary>${summary}</summary>${body}</details>`;
}

function imageHtml(step: StepView, file: string, mimeType: string, source: string, images: ImageSource): string {
  const caption = `What the model was shown at step ${step.index}${source ? ` (${source})` : ''}`;
  const url = imageTypes.has(mimeType) ? images(file, mimeType) : undefined;
  if (!url) return `<div class="note">${escapeHtml(`${caption}: the image ${file} is no longer in the run folder`)}</div>`;
  return `<figure class="screenshot"><img loading="lazy" decoding="async" alt="${escapeHtml(caption)}" src="${url}"><figcaption>${escapeHtml(caption)}</figcaption></figure>`;
}

/** The flow as a tree: a parallel step's branches side by side, other steps' parts one below the other. */
export function flowHtml(nodes: readonly FlowTreeNode[], firstStep: ReadonlyMap<string, number>): string {
  if (nodes.length === 0) return '';
  return `<div class="flow-children">${nodes.map((node) => flowNodeHtml(node, firstStep)).join('')}</div>`;
}

function flowNodeHtml(node: FlowTreeNode, firstStep: ReadonlyMap<string, number>): string {
  const facts = [
    `<strong>${escapeHtml(node.title ?? node.label)}</strong>`,
    `<span class="step-path">${escapeHtml(node.path)}</span>`,
    node.kind && node.kind !== 'agent' ? `<span class="muted">${escapeHtml(node.kind)}</span>` : '',
    node.agent ? `<span class="muted">agent ${escapeHtml(node.agent)}</span>` : '',
    /(^|\/)replan-\d+$/.test(node.path) ? '<span class="replan">replan</span>' : '',
    `<span class="status status-${escapeHtml(statusClass(node.status))}">${escapeHtml(node.status)}</span>`,
    node.steps === undefined ? '' : `<span>${node.steps} ${node.steps === 1 ? 'step' : 'steps'}</span>`,
    node.totalTokens === undefined ? '' : `<span>${escapeHtml(formatCount(node.totalTokens))} tokens</span>`,
    node.cost === undefined || node.cost === 0 ? '' : `<span>$${node.cost.toFixed(4)}</span>`,
    node.durationMs === undefined ? '' : `<span>${escapeHtml(formatDuration(node.durationMs))}</span>`,
  ].filter(Boolean);
  const first = firstStep.get(node.path);
  if (first !== undefined) facts.push(`<a href="#step-${first}">steps</a>`);
  const reason = node.reason && node.status !== 'success' ? `<div class="flow-reason">${escapeHtml(previewText(node.reason, 400))}</div>` : '';
  const children = node.children.length === 0
    ? ''
    : `<div class="flow-children${node.kind === 'parallel' ? ' parallel' : ''}">${node.children.map((child) => flowNodeHtml(child, firstStep)).join('')}</div>`;
  return `<div class="flow-node flow-${escapeHtml(statusClass(node.status))}" data-path="${escapeHtml(node.path)}" data-status="${escapeHtml(node.status)}"><div class="step-head">${facts.join('')}</div>${reason}${children}</div>`;
}

export function plansHtml(plans: readonly PlanView[]): string {
  return plans.map(planHtml).join('');
}

function planHtml(plan: PlanView): string {
  const rows = plan.steps.map((step) => [
    `<tr data-status="${escapeHtml(step.status)}">`,
    `<td class="number">${step.number}</td>`,
    `<td><strong>${escapeHtml(step.title)}</strong><div class="muted">${escapeHtml(step.description)}</div></td>`,
    `<td>${escapeHtml(step.executor)}</td>`,
    `<td><span class="status status-${escapeHtml(statusClass(step.status))}">${escapeHtml(step.status)}</span></td>`,
    `<td>${step.reason ? `<div class="flow-reason">${escapeHtml(step.reason)}</div>` : ''}${step.result && step.result !== step.reason ? escapeHtml(previewText(step.result, 300)) : ''}</td>`,
    '</tr>',
  ].join(''));
  const changes = plan.changes.map((change) => `${change.change}${change.step === undefined ? '' : ` ${change.step}`}`);
  return [
    `<div class="plan" data-path="${escapeHtml(plan.path)}">`,
    `<h3>${escapeHtml(plan.title || 'Plan')} <span class="step-path">${escapeHtml(plan.path)}</span> <span class="plan-replans${plan.replans > 0 ? ' replan' : ' muted'}">${plan.replans === 0 ? 'not revised' : `revised ${plan.replans} time${plan.replans === 1 ? '' : 's'}`}</span></h3>`,
    '<table class="plan-steps"><thead><tr><th class="number">#</th><th>Step</th><th>Executor</th><th>Status</th><th>Result</th></tr></thead>',
    `<tbody>${rows.join('')}</tbody></table>`,
    `<div class="muted">Changes: ${escapeHtml(changes.join(', '))}</div>`,
    '</div>',
  ].join('');
}

/** A status as a CSS class name: only letters, digits and dashes. */
export function statusClass(status: string): string {
  return status.toLowerCase().replace(/[^a-z0-9-]+/g, '-');
}
