/**
 * The run as a JUnit XML report, the format CI dashboards read: one testsuite per run, named after
 * the recipe; one testcase for the run itself, one per flow step and one per check. Test names stay the same from
 * run to run (the run id is a property), so dashboards can follow a check's history.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { CheckResult } from '../../config/check-types.js';
import { endingText } from '../../runs/run-status.js';
import { writeFileAtomically } from './report-file.js';
import type { FlowStepRecord } from '../../runs/flow/run-flow.js';
import type { RunReport } from './run-report.js';
import { escapeXmlAttribute, escapeXmlText } from './xml-text.js';

export const junitReportFileName = 'manus-junit.xml';

const messageLimitCharacters = 200;

/** Writes `manus-junit.xml` into `directory` (created when missing) and returns its path. */
export async function writeJunitReport(directory: string, report: RunReport): Promise<string> {
  const file = join(directory, junitReportFileName);
  await writeFileAtomically(file, junitXml(report));
  return file;
}

export function junitXml(report: RunReport, options: { hostname?: string } = {}): string {
  const runFailed = report.status !== 'success';
  const flowSteps = report.flowSteps ?? [];
  const stepFailed = (step: FlowStepRecord) => step.status !== 'success';
  // A step the flow went on past (continue_on_failure) does not fail a run that succeeded.
  const stepFailures = runFailed ? flowSteps.filter(stepFailed).length : 0;
  const stepsSkipped = runFailed ? 0 : flowSteps.filter(stepFailed).length;
  const failures = (runFailed ? 1 : 0) + stepFailures + report.checks.filter((check) => !check.passed && !check.skipped).length;
  const counts = {
    tests: String(1 + flowSteps.length + report.checks.length),
    failures: String(failures),
    errors: '0',
    skipped: String(stepsSkipped + report.checks.filter((check) => check.skipped).length),
    time: seconds(report.durationMs),
  };
  const suiteAttributes: Record<string, string> = { name: report.recipe.name, ...counts };
  if (report.startedAt) suiteAttributes.timestamp = junitTimestamp(report.startedAt);
  suiteAttributes.hostname = options.hostname ?? hostname();
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    // The common schema has no `skipped` on testsuites, only on each testsuite.
    `<testsuites${attributes({ name: 'manus', tests: counts.tests, failures: counts.failures, errors: counts.errors, time: counts.time })}>`,
    `  <testsuite${attributes(suiteAttributes)}>`,
    ...propertiesElement(report),
    ...runTestcase(report, runFailed),
    ...flowSteps.flatMap((step) => flowStepTestcase(report, step, runFailed)),
    ...report.checks.flatMap((check) => checkTestcase(report, check)),
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

/** Why a run never started: an error in the recipe, its parameters or the command line. */
export interface RunNotStarted {
  recipe: { name: string; file?: string };
  error: { code: string; message: string };
  exitCode: number;
  startedAt: string;
}

/**
 * The report of a run that stopped before it started, so a CI step that uploads the JUnit file
 * finds one, failed, saying why: one testcase, `run`, as for a run that started.
 */
export function notStartedJunitXml(failed: RunNotStarted, options: { hostname?: string } = {}): string {
  const counts = { tests: '1', failures: '1', errors: '0', time: seconds(0) };
  const body = [`status: not started`, `exit code: ${failed.exitCode}`, `error: ${failed.error.code}`, failed.error.message].join('\n');
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attributes({ name: 'manus', ...counts })}>`,
    `  <testsuite${attributes({ name: failed.recipe.name, ...counts, skipped: '0', timestamp: junitTimestamp(failed.startedAt), hostname: options.hostname ?? hostname() })}>`,
    '    <properties>',
    ...[['recipe_file', failed.recipe.file], ['status', 'not-started'], ['exit_code', String(failed.exitCode)]]
      .filter(([, value]) => value !== undefined && value !== '')
      .map(([name, value]) => `      <property${attributes({ name: name!, value: value! })}/>`),
    '    </properties>',
    `    <testcase${attributes({ name: 'run', classname: failed.recipe.name, time: seconds(0) })}>`,
    `      <failure${attributes({ message: firstLine(failed.error.message), type: failed.error.code })}>${escapeXmlText(body)}</failure>`,
    '    </testcase>',
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

export async function writeNotStartedJunitReport(directory: string, failed: RunNotStarted): Promise<string> {
  const file = join(directory, junitReportFileName);
  await writeFileAtomically(file, notStartedJunitXml(failed));
  return file;
}

function propertiesElement(report: RunReport): string[] {
  const properties: Array<[string, string | number | undefined]> = [
    ['run_id', report.runId],
    ['recipe_file', report.recipe.file],
    ['status', report.status],
    ['exit_code', report.exitCode],
    ['attempts', report.attempts],
    ['model', report.model],
  ];
  return [
    '    <properties>',
    ...properties
      .filter(([, value]) => value !== undefined && value !== '')
      .map(([name, value]) => `      <property${attributes({ name, value: String(value) })}/>`),
    '    </properties>',
  ];
}

function runTestcase(report: RunReport, failed: boolean): string[] {
  const lines = [`    <testcase${attributes({ name: 'run', classname: report.recipe.name, time: seconds(report.durationMs) })}>`];
  if (failed) {
    const reason = report.error?.message ?? report.answer;
    const message = firstLine(report.exhaustedBudget ? `${report.status}: ${endingText(report, reason)}` : `${report.status}: ${reason}`);
    const body = [
      `status: ${report.status}`,
      `exit code: ${report.exitCode}`,
      ...(report.exhaustedBudget ? [`exhausted budget: ${report.exhaustedBudget}`] : []),
      ...(report.error ? [`error: ${report.error.code}: ${report.error.message}`] : []),
      ...(report.question ? [`question: ${report.question}`] : []),
      `answer: ${report.answer}`,
    ].join('\n');
    lines.push(`      <failure${attributes({ message, type: report.status })}>${escapeXmlText(body)}</failure>`);
  }
  lines.push(`      <system-out>${escapeXmlText(runSummary(report))}</system-out>`, '    </testcase>');
  return lines;
}

function runSummary(report: RunReport): string {
  const { usage } = report;
  return [
    `run id: ${report.runId}`,
    `status: ${report.status}`,
    `exit code: ${report.exitCode}`,
    `steps: ${report.steps}`,
    `attempts: ${report.attempts}`,
    `tokens: ${usage.totalTokens} (prompt ${usage.promptTokens}, completion ${usage.completionTokens})`,
    ...(report.cost !== undefined ? [`cost: $${report.cost.toFixed(4)}`] : []),
    `duration: ${seconds(report.durationMs)} s`,
    ...(report.files && report.files.length > 0 ? [`files: ${report.files.join(', ')}`] : []),
    `answer: ${report.answer}`,
  ].join('\n');
}

function flowStepTestcase(report: RunReport, step: FlowStepRecord, runFailed: boolean): string[] {
  const open = `    <testcase${attributes({ name: step.path, classname: `${report.recipe.name}.flow`, time: seconds(step.durationMs) })}`;
  const summary = `      <system-out>${escapeXmlText(`kind: ${step.kind}\nstatus: ${step.status}\nsteps: ${step.steps}\ntokens: ${step.usage.totalTokens}\nanswer: ${step.answer}`)}</system-out>`;
  if (step.status === 'success') return [`${open}>`, summary, '    </testcase>'];
  const message = firstLine(`${step.status}: ${step.reason ?? step.answer}`);
  const verdict = runFailed
    ? `      <failure${attributes({ message, type: step.status })}>${escapeXmlText(step.reason ?? step.answer)}</failure>`
    : `      <skipped${attributes({ message: `${message} (the flow went on past it)` })}/>`;
  return [`${open}>`, verdict, summary, '    </testcase>'];
}

function checkTestcase(report: RunReport, check: CheckResult): string[] {
  const open = `    <testcase${attributes({ name: check.name, classname: `${report.recipe.name}.checks`, time: seconds(check.durationMs) })}`;
  if (check.skipped) return [`${open}>`, `      <skipped${attributes({ message: firstLine(check.detail) })}/>`, '    </testcase>'];
  if (check.passed) return [`${open}/>`];
  const failure = `      <failure${attributes({ message: firstLine(check.detail), type: check.kind })}>${escapeXmlText(check.detail)}</failure>`;
  return [`${open}>`, failure, '    </testcase>'];
}

export function attributes(values: Record<string, string>): string {
  return Object.entries(values)
    .map(([name, value]) => ` ${name}="${escapeXmlAttribute(value)}"`)
    .join('');
}

export function seconds(milliseconds: number): string {
  return (Math.max(0, milliseconds) / 1000).toFixed(3);
}

/** The common JUnit schema allows no zone in a timestamp; this one is in UTC. */
export function junitTimestamp(iso: string): string {
  const time = new Date(iso);
  return Number.isNaN(time.getTime()) ? iso : time.toISOString().slice(0, 19);
}

export function firstLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  const characters = [...line];
  return characters.length > messageLimitCharacters ? `${characters.slice(0, messageLimitCharacters - 3).join('')}...` : line;
}
