/**
 * The eval as JUnit XML: one testsuite per model, one testcase per row of it (its repeats
 * together), failed when a repeat did not pass, and one testcase per gate. Names stay the same from
 * eval to eval, so dashboards follow a row's history.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomically } from '../reports/report-file.js';
import { escapeXmlAttribute, escapeXmlText } from '../reports/xml-text.js';
import type { EvalRecord } from './eval-record.js';

export const evalJunitFileName = 'manus-junit.xml';

export async function writeEvalJunitReport(directory: string, record: EvalRecord): Promise<string> {
  const file = join(directory, evalJunitFileName);
  await writeFileAtomically(file, evalJunitXml(record));
  return file;
}

export function evalJunitXml(record: EvalRecord, options: { hostname?: string } = {}): string {
  const suites = record.models.map((model) => {
    const cases = record.rows.map((row) => {
      const runs = record.items.filter((item) => item.model === model && item.row === row);
      const failed = runs.filter((run) => !run.passed);
      const seconds = (runs.reduce((sum, run) => sum + run.durationMs, 0) / 1000).toFixed(3);
      const name = `${record.name} ${row} [${model}]`;
      const body = failed.length === 0 ? '' : [
        `      <failure${attributes({ message: `${failed.length} of ${runs.length} run(s) did not pass: ${firstReason(failed[0])}` })}>`,
        escapeXmlText(failed.map((run) => `repeat ${run.repeat} (${run.status}, score ${run.score.toFixed(3)}${run.runId ? `, run ${run.runId}` : ''}):\n${run.scores.map((score) => `  ${score.passed ? 'pass' : 'FAIL'} ${score.name} ${score.score.toFixed(3)}: ${score.reason}`).join('\n')}`).join('\n')),
        '      </failure>',
      ].join('\n');
      return { failed: failed.length > 0, xml: `    <testcase${attributes({ name, classname: `eval.${record.name}.${model}`, time: seconds })}${body ? `>\n${body}\n    </testcase>` : ' />'}` };
    });
    const gates = record.gates.filter((gate) => gate.message.startsWith(`${model}:`)).map((gate) => ({
      failed: !gate.passed,
      xml: `    <testcase${attributes({ name: `gate ${gate.gate} [${model}]`, classname: `eval.${record.name}.${model}`, time: '0' })}${gate.passed ? ' />' : `>\n      <failure${attributes({ message: gate.message })} />\n    </testcase>`}`,
    }));
    const all = [...cases, ...gates];
    return [
      `  <testsuite${attributes({ name: `${record.name} [${model}]`, tests: String(all.length), failures: String(all.filter((each) => each.failed).length), errors: '0', skipped: '0', hostname: options.hostname ?? hostname() })}>`,
      ...all.map((each) => each.xml),
      '  </testsuite>',
    ].join('\n');
  });
  const tests = record.models.length * record.rows.length + record.gates.length;
  const failures = record.models.reduce((sum, model) => sum + record.rows.filter((row) => record.items.some((item) => item.model === model && item.row === row && !item.passed)).length, 0)
    + record.gates.filter((gate) => !gate.passed).length;
  return ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites${attributes({ name: 'manus eval', tests: String(tests), failures: String(failures), errors: '0' })}>`, ...suites, '</testsuites>', ''].join('\n');
}

function firstReason(run: EvalRecord['items'][number]): string {
  const failed = run.scores.find((score) => !score.passed);
  return failed ? `${failed.name}: ${failed.reason}` : run.status;
}

function attributes(values: Record<string, string>): string {
  return Object.entries(values).map(([key, value]) => ` ${key}="${escapeXmlAttribute(value)}"`).join('');
}
