import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOMParser } from 'linkedom';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CheckResult } from '../runtime/config/check-types.js';
import { junitReportFileName, junitXml, writeJunitReport } from '../runtime/applications/reports/junit-report.js';
import { jsonReportFileName, writeJsonReport, type RunReport } from '../runtime/applications/reports/run-report.js';
import { writeLoopFixture } from './support/loop-fixture.js';
import { runCli } from './support/run-cli.js';
import { startScriptedModelServer } from './support/scripted-model-server.js';

let root: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-reports-')));
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

const passedCheck: CheckResult = { name: 'unit tests', kind: 'command', passed: true, detail: '`npm test` exited with status 0', durationMs: 1250 };
const failedCheck: CheckResult = {
  name: 'report.json matches its schema',
  kind: 'file',
  passed: false,
  detail: 'report.json does not match its schema:\n  - /count must be >= 1',
  durationMs: 4,
};
const skippedCheck: CheckResult = { name: 'lint', kind: 'command', passed: false, skipped: true, detail: 'the run was interrupted', durationMs: 0 };

function report(overrides: Partial<RunReport> = {}): RunReport {
  return {
    runId: '20250102-030405-abcdef',
    recipe: { name: 'build-site', file: 'recipes/build-site.yaml' },
    status: 'success',
    exitCode: 0,
    answer: 'The site is built.',
    steps: 4,
    usage: { promptTokens: 1200, completionTokens: 345, totalTokens: 1545 },
    durationMs: 12_345,
    startedAt: '2025-01-02T03:04:05.678Z',
    model: 'gpt-4o-mini',
    checks: [passedCheck],
    attempts: 1,
    ...overrides,
  };
}

function parseXml(xml: string) {
  return new DOMParser().parseFromString(xml, 'text/xml');
}

/**
 * Parses the XML with Python's expat, a strict, validating-for-well-formedness parser, and
 * returns what it read: any malformed byte makes this throw.
 */
function parseStrictly(xml: string): {
  suites: Record<string, string>;
  suite: Record<string, string>;
  properties: Record<string, string>;
  testcases: Array<{ attributes: Record<string, string>; children: Array<{ tag: string; attributes: Record<string, string>; text: string }> }>;
} {
  const script = `
import json, sys
from xml.dom import minidom
document = minidom.parseString(sys.stdin.buffer.read())
def attributes(element):
    return {name: value for name, value in element.attributes.items()}
def text(element):
    return ''.join(node.data for node in element.childNodes if node.nodeType in (node.TEXT_NODE, node.CDATA_SECTION_NODE))
suites = document.documentElement
suite = suites.getElementsByTagName('testsuite')[0]
print(json.dumps({
    'suites': attributes(suites),
    'suite': attributes(suite),
    'properties': {p.getAttribute('name'): p.getAttribute('value') for p in suite.getElementsByTagName('property')},
    'testcases': [
        {'attributes': attributes(case), 'children': [
            {'tag': child.tagName, 'attributes': attributes(child), 'text': text(child)}
            for child in case.childNodes if child.nodeType == child.ELEMENT_NODE]}
        for case in suite.getElementsByTagName('testcase')],
}))
`;
  return JSON.parse(execFileSync('python3', ['-c', script], { input: xml, encoding: 'utf8' }));
}

describe('the JSON report', () => {
  it('writes manus-report.json with every field, creating the folder', async () => {
    const folder = join(root, 'reports', 'nested');
    const file = await writeJsonReport(folder, report({ checks: [passedCheck, failedCheck], status: 'checks-failed', exitCode: 1, attempts: 2 }));
    expect(file).toBe(join(folder, jsonReportFileName));
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      version: 1,
      runId: '20250102-030405-abcdef',
      recipe: { name: 'build-site', file: 'recipes/build-site.yaml' },
      status: 'checks-failed',
      exitCode: 1,
      answer: 'The site is built.',
      steps: 4,
      usage: { promptTokens: 1200, completionTokens: 345, totalTokens: 1545 },
      durationMs: 12_345,
      startedAt: '2025-01-02T03:04:05.678Z',
      model: 'gpt-4o-mini',
      checks: [passedCheck, failedCheck],
      attempts: 2,
    });
    expect(readdirSync(folder)).toEqual([jsonReportFileName]);
  });

  it('replaces an earlier report whole', async () => {
    await writeJsonReport(root, report({ answer: 'x'.repeat(100_000) }));
    await writeJsonReport(root, report({ answer: 'short' }));
    expect(JSON.parse(readFileSync(join(root, jsonReportFileName), 'utf8')).answer).toBe('short');
    expect(readdirSync(root)).toEqual([jsonReportFileName]);
  });
});

describe('the JUnit report', () => {
  it('has one suite named after the recipe, a testcase for the run and one per check', async () => {
    const file = await writeJunitReport(root, report({ checks: [passedCheck, failedCheck, skippedCheck], status: 'checks-failed', exitCode: 1, attempts: 2 }));
    expect(file).toBe(join(root, junitReportFileName));
    const document = parseXml(readFileSync(file, 'utf8'));
    const suites = document.documentElement;
    expect(suites.tagName).toBe('testsuites');
    expect(suites.getAttribute('tests')).toBe('4');
    expect(suites.getAttribute('failures')).toBe('2');
    expect(suites.getAttribute('errors')).toBe('0');
    expect(suites.hasAttribute('skipped')).toBe(false);
    const testsuites = suites.querySelectorAll('testsuite');
    expect(testsuites).toHaveLength(1);
    const suite = testsuites[0];
    expect(suite.getAttribute('name')).toBe('build-site');
    expect(suite.getAttribute('tests')).toBe('4');
    expect(suite.getAttribute('failures')).toBe('2');
    expect(suite.getAttribute('skipped')).toBe('1');
    expect(suite.getAttribute('time')).toBe('12.345');
    expect(suite.getAttribute('timestamp')).toBe('2025-01-02T03:04:05');

    const cases = [...suite.querySelectorAll('testcase')];
    expect(cases.map((testcase) => [testcase.getAttribute('classname'), testcase.getAttribute('name'), testcase.getAttribute('time')])).toEqual([
      ['build-site', 'run', '12.345'],
      ['build-site.checks', 'unit tests', '1.250'],
      ['build-site.checks', 'report.json matches its schema', '0.004'],
      ['build-site.checks', 'lint', '0.000'],
    ]);
    const [run, passed, failed, skipped] = cases;
    expect(run.querySelector('failure')?.getAttribute('type')).toBe('checks-failed');
    expect(run.querySelector('system-out')?.textContent).toContain('exit code: 1\nsteps: 4\nattempts: 2\ntokens: 1545 (prompt 1200, completion 345)');
    expect(passed.children).toHaveLength(0);
    expect(failed.querySelector('failure')?.getAttribute('type')).toBe('file');
    expect(failed.querySelector('failure')?.textContent).toBe('report.json does not match its schema:\n  - /count must be >= 1');
    expect(skipped.querySelector('skipped')).not.toBeNull();
  });

  it('has a testcase per flow step: failed with the reason when the run failed, skipped when the flow went on past it', () => {
    const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };
    const flowSteps = [
      { path: 'research/1', kind: 'agent', status: 'success', answer: 'about owls', steps: 2, usage, durationMs: 1500 },
      { path: 'research/2', kind: 'agent', status: 'failure', answer: 'no luck', reason: 'the site was down', steps: 3, usage, durationMs: 250 },
      { path: 'research', kind: 'parallel', status: 'failure', answer: '', reason: 'a branch failed', steps: 5, usage, durationMs: 1500 },
    ] as const;
    const failed = parseStrictly(junitXml(report({ status: 'failure', exitCode: 1, checks: [], flowSteps: [...flowSteps] })));
    expect(failed.suite).toMatchObject({ tests: '4', failures: '3', skipped: '0' });
    expect(failed.testcases.map((testcase) => [testcase.attributes.classname, testcase.attributes.name, testcase.attributes.time])).toEqual([
      ['build-site', 'run', '12.345'],
      ['build-site.flow', 'research/1', '1.500'],
      ['build-site.flow', 'research/2', '0.250'],
      ['build-site.flow', 'research', '1.500'],
    ]);
    expect(failed.testcases[1].children.map((child) => child.tag)).toEqual(['system-out']);
    expect(failed.testcases[1].children[0].text).toBe('kind: agent\nstatus: success\nsteps: 2\ntokens: 15\nanswer: about owls');
    expect(failed.testcases[2].children[0]).toMatchObject({ tag: 'failure', attributes: { message: 'failure: the site was down', type: 'failure' }, text: 'the site was down' });

    const wentOn = parseStrictly(junitXml(report({ checks: [], flowSteps: [flowSteps[0], flowSteps[1]] })));
    expect(wentOn.suite).toMatchObject({ tests: '3', failures: '0', skipped: '1' });
    expect(wentOn.testcases[2].children[0]).toMatchObject({ tag: 'skipped', attributes: { message: 'failure: the site was down (the flow went on past it)' } });
  });

  it('passes the run testcase when the run succeeded and fails it with the status otherwise', () => {
    const success = parseStrictly(junitXml(report(), { hostname: 'builder' }));
    expect(success.suites).toEqual({ name: 'manus', tests: '2', failures: '0', errors: '0', time: '12.345' });
    expect(success.suite).toMatchObject({ tests: '2', failures: '0', errors: '0', skipped: '0' });
    expect(success.suite.hostname).toBe('builder');
    expect(success.testcases[0].children.map((child) => child.tag)).toEqual(['system-out']);

    const exhausted = parseStrictly(
      junitXml(report({ status: 'budget-exhausted', exitCode: 3, exhaustedBudget: 'steps', answer: 'The steps budget ran out.', checks: [] })),
    );
    expect(exhausted.suites).toMatchObject({ tests: '1', failures: '1' });
    const failure = exhausted.testcases[0].children[0];
    expect(failure.tag).toBe('failure');
    // Said once: the answer repeats what the budget says.
    expect(failure.attributes).toEqual({ message: 'budget-exhausted: the steps budget ran out', type: 'budget-exhausted' });
    expect(failure.text).toContain('exit code: 3\nexhausted budget: steps');

    const providerFailure = parseStrictly(
      junitXml(report({ status: 'provider-failed', exitCode: 4, error: { code: 'provider_authentication', message: 'The API key was rejected.' } })),
    );
    expect(providerFailure.testcases[0].children[0].attributes.message).toBe('provider-failed: The API key was rejected.');
    expect(providerFailure.testcases[0].children[0].text).toContain('error: provider_authentication: The API key was rejected.');
    expect(providerFailure.properties).toEqual({
      run_id: '20250102-030405-abcdef',
      recipe_file: 'recipes/build-site.yaml',
      status: 'provider-failed',
      exit_code: '4',
      attempts: '1',
      model: 'gpt-4o-mini',
    });
  });

  it('fails the run testcase of a run waiting for an answer, naming the question and how to give it', () => {
    const waiting = parseStrictly(junitXml(report({
      status: 'needs-input',
      exitCode: 5,
      checks: [],
      question: 'Which city should the trip start in?',
      error: { code: 'needs_input', message: 'the agent needs an answer to "Which city should the trip start in?", and the run is not interactive' },
      answer: 'the agent needs an answer to "Which city should the trip start in?", and the run is not interactive; answer it with: manus resume 20250102-030405-abcdef --answer "..."',
    })));
    const failure = waiting.testcases[0].children[0];
    expect(failure.attributes).toEqual({
      message: 'needs-input: the agent needs an answer to "Which city should the trip start in?", and the run is not interactive',
      type: 'needs-input',
    });
    expect(failure.text).toContain('exit code: 5\nerror: needs_input: ');
    expect(failure.text).toContain('question: Which city should the trip start in?\n');
    expect(failure.text).toContain('manus resume 20250102-030405-abcdef --answer');
  });

  it('escapes markup, drops characters XML cannot hold and keeps everything else exact', () => {
    const nasty = 'a < b && c > d "quoted" \'single\' ]]> <![CDATA[ x ]]> \u0000\u0007\u001b[31m bell \uD800 lone \uFFFE end 日本語 😀\r\nnext line\ttab';
    const cleaned = 'a < b && c > d "quoted" \'single\' ]]> <![CDATA[ x ]]> [31m bell  lone  end 日本語 😀\r\nnext line\ttab';
    const xml = junitXml(
      report({
        recipe: { name: `recipe ${nasty}` },
        status: 'failure',
        exitCode: 1,
        answer: nasty,
        checks: [{ name: `check ${nasty}`, kind: 'command', passed: false, detail: nasty, durationMs: 1 }],
      }),
    );
    expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
    const parsed = parseStrictly(xml);
    expect(parsed.suite.name).toBe(`recipe ${cleaned}`);
    const [run, check] = parsed.testcases;
    expect(run.children[0].attributes.message).toBe(`failure: ${cleaned.split('\n')[0]}`);
    expect(run.children[1].text.endsWith(`answer: ${cleaned}`)).toBe(true);
    expect(check.attributes.name).toBe(`check ${cleaned}`);
    expect(check.children[0].text).toBe(cleaned);

    const document = parseXml(xml);
    expect(document.querySelectorAll('testcase')).toHaveLength(2);
    expect(document.querySelectorAll('testcase')[1].querySelector('failure')?.textContent).toBe(cleaned);
  });

  it('shortens failure messages to one line and keeps the full text in the element', () => {
    const detail = `${'long '.repeat(100)}\nsecond line`;
    const parsed = parseStrictly(junitXml(report({ checks: [{ name: 'wordy', kind: 'command', passed: false, detail, durationMs: 1 }] })));
    const failure = parsed.testcases[1].children[0];
    expect([...failure.attributes.message].length).toBe(200);
    expect(failure.attributes.message.endsWith('...')).toBe(true);
    expect(failure.text).toBe(detail);
  });
});

describe('what the command line says and writes when a run cannot succeed', () => {
  it('says once that a budget ran out', async () => {
    const fixture = writeLoopFixture({ agentExtra: 'max_steps: 1' });
    const server = await startScriptedModelServer({ turns: [{ toolCalls: [{ name: 'echo', arguments: { text: 'again' } }] }] });
    try {
      const result = await runCli(['run', 'recipe.yaml', '--ci', '--report', 'reports'], { cwd: fixture, env: { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model' } });
      expect(result.exitCode).toBe(3);
      expect(result.stderr).toMatch(/manus: run \S+ ended: the steps budget ran out\n/);
      expect(result.stderr).not.toMatch(/budget ran out: The steps budget ran out/);
      expect(readFileSync(join(fixture, 'reports', junitReportFileName), 'utf8')).toContain('message="budget-exhausted: the steps budget ran out"');
    } finally {
      await server.close();
    }
  });

  it('writes a JUnit file with one failed testcase for a missing parameter, so a CI step that uploads it finds one', async () => {
    const fixture = writeLoopFixture({ prompt: 'Describe {{topic}}.', recipeExtra: 'parameters:\n  topic:\n    type: string' });
    const result = await runCli(['run', 'recipe.yaml', '--ci', '--report', 'reports'], { cwd: fixture });
    expect(result.exitCode).toBe(2);
    const junit = parseStrictly(readFileSync(join(fixture, 'reports', junitReportFileName), 'utf8'));
    expect(junit.suite).toMatchObject({ name: 'loop-test', tests: '1', failures: '1' });
    expect(junit.testcases).toHaveLength(1);
    const [failure] = junit.testcases[0].children;
    expect(failure.tag).toBe('failure');
    expect(failure.attributes.type).toBe('config_invalid');
    expect(failure.attributes.message).toMatch(/topic/);
    expect(failure.text).toMatch(/exit code: 2/);
  });
});
