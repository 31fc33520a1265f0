/**
 * Runs as text for people: the table `manus runs` prints, and one run's transcript (the task,
 * each step's assistant text and tool calls, checks and retries, and how it ended). Long tool
 * arguments and results are shortened unless `full` is set; the final answer never is.
 */
import type { RunEventRecord, RunRecord, RunSummary } from '../../runs/run-history.js';
import { truncateMiddle } from '../../contract/truncate.js';
import { describeCacheHits } from '../../contract/token-usage.js';
import { formatCount, formatDuration, formatLocalTime, formatTable } from './display-format.js';
import { connectionAsker, isRecord, numberField, recordField, textField } from '../../services/event-fields.js';
import { flowTree, type FlowTreeNode } from './flow-tree.js';

export interface TranscriptOptions {
  /** Show tool arguments, results and check output in full. */
  full?: boolean;
}

const argumentsLimit = 300;
const resultLimit = 800;
const checkDetailLimit = 1200;

export function formatRunTable(summaries: readonly RunSummary[]): string {
  const header = ['ID', 'RECIPE', 'STATUS', 'STEPS', 'TOKENS', 'COST', 'STARTED', 'DURATION'];
  const rows = summaries.map((summary) => [
    summary.id,
    summary.recipe || '-',
    summary.status,
    String(summary.steps),
    formatCount(summary.totalTokens),
    summary.cost === undefined ? '-' : `$${summary.cost.toFixed(4)}`,
    formatLocalTime(summary.started),
    formatDuration(summary.durationMs),
  ]);
  return formatTable(header, rows, new Set([3, 4, 5]));
}

export function formatTranscript(run: RunRecord, options: TranscriptOptions = {}): string {
  const lastEnd = run.events.filter((event) => event.type === 'run-end').at(-1);
  const transcript = new Transcript(options, flowTree(run.events), lastEnd);
  for (const warning of run.summary.warnings) transcript.line(`warning: ${warning}`);
  for (const event of run.events) transcript.event(event);
  if (run.summary.status === 'running' || run.summary.status === 'incomplete') transcript.notEnded(run.summary);
  return transcript.text();
}

class Transcript {
  private readonly lines: string[] = [];
  private readonly full: boolean;
  /** The step being shown, with the flow step's path it belongs to. */
  private step: string | undefined;

  /** A flow's steps as a tree, shown before the run's end, or where it stopped. */
  private readonly flowRoots: FlowTreeNode[];

  constructor(options: TranscriptOptions, flowRoots: FlowTreeNode[], private readonly lastEnd?: RunEventRecord) {
    this.full = options.full === true;
    this.flowRoots = flowRoots;
  }

  text(): string {
    return `${this.lines.join('\n').replace(/^\n+/, '')}\n`;
  }

  line(text: string): void {
    this.lines.push(text);
  }

  event(event: RunEventRecord): void {
    switch (event.type) {
      case 'run-start':
        return this.start(event);
      case 'run-resume':
        this.step = undefined;
        return this.line(`\nResumed at ${formatLocalTime(textField(event.time))}, after step ${numberField(event.step) ?? 0}.`);
      case 'model-response':
        return this.reply(event);
      case 'tool-call-start':
        this.enterStep(event);
        return this.line(`  > ${textField(event.tool) ?? '?'} ${this.shorten(compactJson(event.arguments), argumentsLimit)}`);
      case 'tool-call-end':
        return this.toolResult(event);
      case 'model-retry':
        return this.line(`  (the model request failed: ${textField(event.reason) ?? 'unknown reason'}; retried after ${formatDuration(numberField(event.delayMs))})`);
      case 'profile-switch':
        return this.line(`  (the model profile ${textField(event.from) ?? '?'} gave way to ${textField(event.to) ?? '?'}: ${textField(event.reason) ?? 'no reason given'})`);
      case 'model-rate-wait':
        return this.line(`  (the model request waited ${formatDuration(numberField(event.waitMs))} for the rate limit: ${textField(event.limit) ?? 'unknown'})`);
      case 'stuck-nudge':
        return this.line('  (the agent was repeating itself and was told to change course)');
      case 'error-streak-nudge':
        return this.line(`  (the last ${numberField(event.failures) ?? '?'} tool calls failed; the agent was told to change course)`);
      case 'tool-call-skipped':
        return this.line(`  > ${textField(event.tool) ?? '?'} skipped: an earlier call in the turn finished the run`);
      case 'tool-error-uncaught':
        return this.line(`  warning: ${textField(event.tool) ?? '?'} threw after its call ended: ${textField(event.message) ?? ''}`);
      case 'history-compacted':
        return this.line('  (older history was summarised to fit the context window)');
      case 'compaction-failed':
        return this.line(`  (summarising older history failed: ${textField((event.error as { message?: unknown } | undefined)?.message) ?? 'unknown reason'})`);
      case 'history-trimmed':
        return this.line(`  (${numberField(event.removedMessages) ?? '?'} older messages were dropped to fit the context window)`);
      case 'human-input-needed':
        return this.line(`  question with no one to answer it: ${textField(event.question) ?? ''}`);
      case 'permission-decided':
        if (event.decision === 'allow' && event.by === 'rules') return;
        return this.line(`  ${event.decision === 'allow' ? 'approved' : 'denied'} ${textField(event.tool) ?? '?'}${textField(event.reason) ? `: ${textField(event.reason)}` : ''}`);
      case 'permission-needed':
        return this.line(`  ${textField(event.tool) ?? '?'} needs approval (${textField(event.reason) ?? 'a rule asks'}), and no one could give it`);
      case 'human-answer':
        this.line(`  question: ${textField(event.question) ?? ''}`);
        return this.line(`  answer${event.source ? ` (${String(event.source)})` : ''}: ${textField(event.answer) ?? ''}`);
      case 'run-warning':
        return this.line(`  warning: ${textField(event.message) ?? ''}`);
      case 'connection-refused':
        return this.line(`  connection refused to ${textField(event.host) ?? '?'}:${numberField(event.port) ?? '?'} for ${connectionAsker(event)}`);
      case 'interrupted':
        return this.line('\nInterrupted.');
      case 'checks':
        return this.checks(event);
      case 'retry':
        return this.retry(event);
      case 'run-end':
        return this.end(event);
      default:
        // Other events (requests, logs, sandbox choice) say nothing a reader of the transcript needs.
        return;
    }
  }

  notEnded(summary: RunSummary): void {
    this.flow();
    const state = summary.status === 'running' ? 'is still running' : 'stopped without recording its end';
    this.line(`\nNo end recorded: the run ${state}.`);
    this.line(`  steps: ${summary.steps}, tokens: ${formatCount(summary.totalTokens)}, elapsed: ${formatDuration(summary.durationMs)}`);
  }

  private start(event: RunEventRecord): void {
    const recipe = recordField(event.recipe);
    const model = recordField(event.model);
    this.line(`Run:       ${textField(event.runId) ?? '?'}`);
    if (recipe) this.line(`Recipe:    ${textField(recipe.name) ?? '?'}${recipe.file ? ` (${String(recipe.file)})` : ''}`);
    if (event.agent) this.line(`Agent:     ${String(event.agent)}`);
    if (model) {
      const details = [textField(model.provider), model.profile ? `profile ${String(model.profile)}` : undefined].filter(Boolean);
      this.line(`Model:     ${textField(model.model) ?? '?'}${details.length > 0 ? ` (${details.join(', ')})` : ''}`);
    }
    if (event.workspace) this.line(`Workspace: ${String(event.workspace)}`);
    this.line(`Started:   ${formatLocalTime(textField(event.time))}`);
    this.line('\nTask:');
    this.line(indent(textField(event.task) ?? '', 2));
  }

  private reply(event: RunEventRecord): void {
    this.enterStep(event);
    const content = textField(event.content)?.trim();
    if (content) this.line(`  assistant: ${indent(content, 4).trimStart()}`);
  }

  private toolResult(event: RunEventRecord): void {
    const files = Array.isArray(event.files) && event.files.length > 0 ? `; files: ${event.files.join(', ')}` : '';
    this.line(`    ${event.isError === true ? 'error' : 'ok'} (${formatDuration(numberField(event.durationMs))})${files}`);
    const content = textField(event.content)?.trimEnd();
    if (content) this.line(indent(this.shorten(content, resultLimit), 6));
  }

  private checks(event: RunEventRecord): void {
    const results = (Array.isArray(event.results) ? event.results : []).filter(isRecord);
    const count = (predicate: (result: Record<string, unknown>) => boolean) => results.filter(predicate).length;
    const skipped = count((result) => result.skipped === true);
    const passed = count((result) => result.passed === true);
    const failed = results.length - passed - skipped;
    this.line(`\nChecks after attempt ${numberField(event.attempt) ?? 1}: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
    for (const result of results) {
      const verdict = result.skipped === true ? 'SKIP' : result.passed === true ? 'PASS' : 'FAIL';
      this.line(`  ${verdict} ${textField(result.name) ?? '?'}`);
      if (verdict !== 'PASS') this.line(indent(this.shorten(textField(result.detail) ?? '', checkDetailLimit), 6));
    }
  }

  private retry(event: RunEventRecord): void {
    this.step = undefined;
    this.line(`\nRetry: attempt ${numberField(event.attempt) ?? '?'}`);
    if (Array.isArray(event.failedChecks)) this.line(`  because these checks failed: ${event.failedChecks.join(', ')}`);
    const preparation = recordField(event.onFailure);
    if (preparation) {
      this.line(`  on_failure \`${textField(preparation.command) ?? ''}\` ${textField(preparation.ending) ?? ''}`);
      const output = textField(preparation.output)?.trimEnd();
      if (output) this.line(indent(this.shorten(output, resultLimit), 6));
    }
  }

  private end(event: RunEventRecord): void {
    const usage = recordField(event.usage);
    const exitCode = numberField(event.exitCode);
    if (event === this.lastEnd) this.flow();
    this.line(`\nEnd: ${textField(event.status) ?? 'unknown'}${exitCode === undefined ? '' : ` (exit code ${exitCode})`}`);
    const promptTokens = numberField(usage?.promptTokens) ?? 0;
    const cacheHits = describeCacheHits({ promptTokens, completionTokens: 0, totalTokens: 0, cachedPromptTokens: numberField(usage?.cachedPromptTokens) });
    const tokens = usage
      ? `${formatCount(numberField(usage.totalTokens) ?? 0)} (${formatCount(promptTokens)} prompt, ${formatCount(numberField(usage.completionTokens) ?? 0)} completion${cacheHits ? `; ${cacheHits}` : ''})`
      : '0';
    const cost = `, cost: ${numberField(event.cost) === undefined ? 'unknown' : `$${(event.cost as number).toFixed(4)}`}`;
    this.line(`  steps: ${numberField(event.steps) ?? 0}, tokens: ${tokens}${cost}, duration: ${formatDuration(numberField(event.durationMs))}`);
    if (event.exhaustedBudget) this.line(`  the ${String(event.exhaustedBudget)} budget ran out`);
    const error = recordField(event.error);
    if (error) this.line(`  error: ${textField(error.code) ?? ''}: ${textField(error.message) ?? ''}`);
    if (Array.isArray(event.files) && event.files.length > 0) this.line(`  files: ${event.files.join(', ')}`);
    const answer = textField(event.answer)?.trim();
    if (answer) {
      this.line('Answer:');
      this.line(indent(answer, 2));
    }
  }

  /** A flow's steps interleave when they run at once, so each step header names its path. */
  private enterStep(event: RunEventRecord): void {
    const step = numberField(event.step);
    if (step === undefined) return;
    const path = textField(event.path);
    const key = `${path ?? ''}#${step}`;
    if (key === this.step) return;
    this.step = key;
    this.line(path === undefined ? `\nStep ${step}` : `\n${path}, step ${step}`);
  }

  private flow(): void {
    if (this.flowRoots.length === 0) return;
    this.line('\nFlow:');
    for (const root of this.flowRoots) this.lines.push(...flowLines(root, 1));
  }

  private shorten(value: string, limit: number): string {
    return this.full ? value : truncateMiddle(value, limit, 'shortened; --full shows all').text;
  }
}

function flowLines(node: FlowTreeNode, depth: number): string[] {
  const who = node.agent ? `${node.kind} ${node.agent}` : node.kind;
  const figures = [
    node.steps === undefined ? undefined : `${node.steps} ${node.steps === 1 ? 'step' : 'steps'}`,
    node.totalTokens === undefined ? undefined : `${formatCount(node.totalTokens)} tokens`,
    node.durationMs === undefined ? undefined : formatDuration(node.durationMs),
  ].filter(Boolean);
  const title = node.title ? ` "${node.title}"` : '';
  const reason = node.reason ? `: ${truncateMiddle(node.reason, 200, 'shortened').text}` : '';
  const line = `${'  '.repeat(depth)}${node.label} (${who})${title}: ${node.status}${figures.length > 0 ? `, ${figures.join(', ')}` : ''}${reason}`;
  return [line, ...node.children.flatMap((child) => flowLines(child, depth + 1))];
}

function compactJson(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value ?? {}) ?? '';
}

function indent(value: string, spaces: number): string {
  const padding = ' '.repeat(spaces);
  return value
    .split('\n')
    .map((line) => (line === '' ? '' : padding + line))
    .join('\n');
}
