/**
 * What CI reads after a batch: one JSON summary (the batch and every item's outcome) and a JUnit
 * file with one test case per item, its checks in its failure and output, so a dashboard shows
 * which inputs failed and why. Test names stay the same from batch to batch (the item's number and
 * input), so a dashboard can follow an input's history.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { BatchItemRecord, BatchRecord } from '../batch/batch-folder.js';
import { itemInputSummary, itemNumber } from '../batch/item-number.js';
import { attributes, firstLine, junitReportFileName, junitTimestamp, seconds } from './junit-report.js';
import { writeFileAtomically } from './report-file.js';
import { escapeXmlText } from './xml-text.js';

export const batchReportFileName = 'manus-batch-report.json';
export const batchReportVersion = 1;

/** How much of an item's input its test name shows. */
const parameterSummaryWidth = 80;

/**
 * The batch as the contract describes it, without the settings only a resumed batch needs. Each
 * item carries the number people see beside the index the folder keys it by.
 */
export type BatchReport = { batch: Omit<BatchRecord, 'settings'>; items: Array<BatchItemRecord & { number: number }> };

export function batchReport(record: BatchRecord, items: BatchItemRecord[]): BatchReport {
  const { settings: _settings, ...batch } = record;
  const sorted = [...items].sort((left, right) => left.index - right.index);
  return { batch, items: sorted.map((item) => ({ number: itemNumber(item.index), ...item })) };
}

export async function writeBatchJsonReport(directory: string, report: BatchReport): Promise<string> {
  const file = join(directory, batchReportFileName);
  await writeFileAtomically(file, `${JSON.stringify({ version: batchReportVersion, ...report }, null, 2)}\n`);
  return file;
}

export async function writeBatchJunitReport(directory: string, report: BatchReport): Promise<string> {
  const file = join(directory, junitReportFileName);
  await writeFileAtomically(file, batchJunitXml(report));
  return file;
}

export function batchJunitXml(report: BatchReport, options: { hostname?: string } = {}): string {
  const { batch } = report;
  // Items that never started are test cases too: skipped, so the count matches the inputs.
  const byIndex = new Map(report.items.map((item) => [item.index, item]));
  const cases = Array.from({ length: batch.inputs.count }, (_, index) => byIndex.get(index) ?? { index, parameters: {}, status: 'pending' } as Partial<BatchItemRecord> & { index: number; status: string });
  const failures = cases.filter((item) => item.status !== 'success' && item.status !== 'pending' && item.status !== 'running').length;
  const skipped = cases.length - failures - cases.filter((item) => item.status === 'success').length;
  const time = seconds(batch.totals.durationMs);
  const suite: Record<string, string> = { name: batch.recipe.name, tests: String(cases.length), failures: String(failures), errors: '0', skipped: String(skipped), time, timestamp: junitTimestamp(batch.createdAt), hostname: options.hostname ?? hostname() };
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attributes({ name: 'manus batch', tests: suite.tests, failures: suite.failures, errors: '0', time })}>`,
    `  <testsuite${attributes(suite)}>`,
    '    <properties>',
    ...[['batch_id', batch.id], ['recipe_file', batch.recipe.file], ['recipe_hash', batch.recipe.hash], ['status', batch.status], ['exit_code', String(batch.exitCode ?? '')]]
      .filter(([, value]) => value !== '')
      .map(([name, value]) => `      <property${attributes({ name, value })}/>`),
    '    </properties>',
    ...cases.flatMap((item) => itemTestcase(batch.recipe.name, item)),
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}

function itemTestcase(recipeName: string, item: Partial<BatchItemRecord> & { index: number; status: string }): string[] {
  const input = itemInputSummary(item.parameters ?? {}, parameterSummaryWidth);
  const name = `item ${itemNumber(item.index)}${input ? ` (${input})` : ''}`;
  const open = `    <testcase${attributes({ name, classname: recipeName, time: seconds(item.durationMs ?? 0) })}>`;
  if (item.status === 'pending' || item.status === 'running') {
    return [open, `      <skipped${attributes({ message: item.status === 'running' ? 'the item was still running when the batch stopped' : 'the item did not start' })}/>`, '    </testcase>'];
  }
  const checks = item.checks ?? [];
  const failedChecks = checks.filter((check) => !check.passed && !check.skipped);
  const lines = [open];
  if (item.status !== 'success') {
    const reason = item.error?.message ?? item.answer ?? '';
    const body = [
      `status: ${item.status}`,
      `exit code: ${String(item.exitCode)}`,
      ...(item.error ? [`error: ${item.error.code}: ${item.error.message}`] : []),
      ...failedChecks.map((check) => `check failed: ${check.name} (${check.kind}): ${check.detail}`),
      `answer: ${item.answer ?? ''}`,
    ].join('\n');
    lines.push(`      <failure${attributes({ message: firstLine(`${item.status}: ${reason}`), type: item.status })}>${escapeXmlText(body)}</failure>`);
  }
  const output = [
    ...(item.runId ? [`run id: ${item.runId}`] : []),
    `status: ${item.status}`,
    `exit code: ${String(item.exitCode)}`,
    `attempts: ${String(item.attempts ?? 1)}`,
    ...(item.usage ? [`tokens: ${item.usage.totalTokens} (prompt ${item.usage.promptTokens}, completion ${item.usage.completionTokens})`] : []),
    ...(item.cost !== undefined ? [`cost: $${item.cost.toFixed(4)}`] : []),
    ...(item.worker ? [`worker: ${item.worker.id} on ${item.worker.host}`] : []),
    ...checks.map((check) => `check ${check.skipped ? 'skipped' : check.passed ? 'passed' : 'failed'}: ${check.name} (${check.kind}): ${firstLine(check.detail)}`),
    `answer: ${item.answer ?? ''}`,
  ].join('\n');
  lines.push(`      <system-out>${escapeXmlText(output)}</system-out>`, '    </testcase>');
  return lines;
}
