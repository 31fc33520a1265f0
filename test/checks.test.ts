import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { attemptWithChecks, checksEventType, retryEventType } from '../runtime/features/checks/check-attempts.js';
import type { CheckDefinition, CheckInput, CheckResult } from '../runtime/config/check-types.js';
import { readChecks, readRetryPolicy } from '../runtime/features/checks/read-checks.js';
import { retryPrompt } from '../runtime/features/checks/retry-prompt.js';
import { runChecks } from '../runtime/features/checks/run-checks.js';
import { createSandbox, probeBwrap } from '../runtime/services/sandbox/create-sandbox.js';
import { HostSandbox } from '../runtime/services/sandbox/host-sandbox.js';
import { readSandboxOptions } from '../runtime/services/sandbox/sandbox-options.js';
import type { Sandbox } from '../runtime/contract/sandbox-types.js';
import { processesWithArgument } from './support/processes.js';

const bwrap = await probeBwrap();
if (!bwrap.usable) console.warn(`the bubblewrap check test is skipped: ${bwrap.reason}`);

let root: string;
let workspace: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-checks-')));
  workspace = join(root, 'workspace');
  mkdirSync(workspace);
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function input(overrides: Partial<CheckInput> = {}): CheckInput {
  return { workspace, answer: '', signal: new AbortController().signal, ...overrides };
}

/** Definitions from YAML-shaped data, failing the test on any problem. */
function checks(raw: unknown[], options: Parameters<typeof readChecks>[1] = {}): CheckDefinition[] {
  const { checks: definitions, problems } = readChecks(raw, options);
  expect(problems).toEqual([]);
  return definitions;
}

async function runOne(raw: Record<string, unknown>, overrides: Partial<CheckInput> = {}): Promise<CheckResult> {
  const [result] = await runChecks(checks([raw], { responseSchema: overrides.responseSchema }), input(overrides));
  return result;
}

describe('reading checks from a recipe', () => {
  it('converts every kind, with default names and timeout', () => {
    const responseSchema = { type: 'object' };
    const definitions = checks(
      [
        { command: 'npm test' },
        { command: 'make lint', name: 'lint', timeout_seconds: 30 },
        { file: 'out/report.json', schema: { type: 'object' } },
        { file: 'README.md', matches: '^# Title' },
        { file: 'notes.txt' },
        { answer: 'matches_response' },
        { answer_matches: 'done|finished' },
      ],
      { responseSchema },
    );
    expect(definitions).toEqual([
      { kind: 'command', name: 'npm test', command: 'npm test', timeoutSeconds: 300 },
      { kind: 'command', name: 'lint', command: 'make lint', timeoutSeconds: 30 },
      { kind: 'file', name: 'out/report.json matches its schema', file: 'out/report.json', schema: { type: 'object' }, matches: undefined },
      { kind: 'file', name: 'README.md matches /^# Title/', file: 'README.md', schema: undefined, matches: '^# Title' },
      { kind: 'file', name: 'notes.txt exists', file: 'notes.txt', schema: undefined, matches: undefined },
      { kind: 'answer', name: 'the answer matches the response schema' },
      { kind: 'answer_matches', name: 'the answer matches /done|finished/', pattern: 'done|finished' },
    ]);
  });

  it('names a multi-line command after its first line', () => {
    const [definition] = checks([{ command: 'cd app\nnpm test' }]);
    expect(definition.name).toBe('cd app ...');
  });

  it('reports what the schema cannot catch, with the path of each problem', () => {
    const { checks: definitions, problems } = readChecks([
      { command: 'true' },
      { file: 'a.txt', matches: '(unclosed' },
      { answer_matches: '[z-a]' },
      { answer: 'matches_response' },
      { file: 'b.json', schema: { type: 'no-such-type' } },
      { command: 'true', file: 'c.txt' },
      { file: 'd.txt', timeout_seconds: 5 },
    ]);
    expect(definitions.map((definition) => definition.kind)).toEqual(['command']);
    expect(problems.map((problem) => problem.path)).toEqual([
      ['checks', 1, 'matches'],
      ['checks', 2, 'answer_matches'],
      ['checks', 3, 'answer'],
      ['checks', 4, 'schema'],
      ['checks', 5],
      ['checks', 6, 'timeout_seconds'],
    ]);
    expect(problems[0].message).toContain("'matches' is not a valid regular expression");
    expect(problems[2].message).toContain('needs the recipe to declare a response schema');
    expect(problems[3].message).toContain("'schema' is not a valid JSON Schema");
    expect(problems[4].message).toContain('exactly one of command, file, answer, answer_matches (it has command and file)');
    expect(problems[5].message).toBe("'timeout_seconds' belongs to command checks, not file checks");
  });

  it('reads the retry policy, defaulting to a single attempt', () => {
    expect(readRetryPolicy(undefined)).toEqual({ retry: { maxAttempts: 1 }, problems: [] });
    expect(readRetryPolicy({ max_attempts: 3, on_failure: 'git checkout -- .' })).toEqual({
      retry: { maxAttempts: 3, onFailure: 'git checkout -- .' },
      problems: [],
    });
    expect(readRetryPolicy({ max_attempts: 11 }).problems).toEqual([
      { path: ['retry', 'max_attempts'], message: "'retry.max_attempts' must be a whole number from 1 to 10" },
    ]);
  });
});

describe('command checks', () => {
  it('passes when the command exits 0, running in the workspace', async () => {
    writeFileSync(join(workspace, 'marker.txt'), 'here');
    const result = await runOne({ command: 'test -f marker.txt && echo found it' });
    expect(result).toMatchObject({ name: 'test -f marker.txt && echo found it', kind: 'command', passed: true });
    expect(result.detail).toContain('exited with status 0');
    expect(result.detail).toContain('found it');
  });

  it('fails on a non-zero status and reports the status with standard output and error', async () => {
    const result = await runOne({ command: 'echo checking; echo "2 tests failed" >&2; exit 3', name: 'tests' });
    expect(result.passed).toBe(false);
    expect(result.detail).toContain('exited with status 3');
    expect(result.detail).toContain('checking\n2 tests failed');
  });

  it('keeps the output bounded, with its start and its end', async () => {
    const result = await runOne({ command: 'echo FIRST; head -c 2000000 /dev/zero | tr "\\0" x; echo; echo LAST; exit 1' });
    expect(result.passed).toBe(false);
    expect(result.detail.length).toBeLessThan(5000);
    expect(result.detail).toContain('FIRST');
    expect(result.detail).toContain('LAST');
    expect(result.detail).toContain('omitted');
  });

  it('kills a command that runs past its timeout, with everything it started', async () => {
    const started = performance.now();
    const marker = `60.${process.pid}${Date.now() % 100000}`;
    const result = await runOne({ command: `sleep ${marker} & touch started; wait`, timeout_seconds: 0.5 });
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(result.passed).toBe(false);
    expect(result.detail).toContain('timed out after 0.5 s and was killed');
    expect(existsSync(join(workspace, 'started'))).toBe(true);
    await expect.poll(() => processesWithArgument(marker), { timeout: 3000 }).toEqual([]);
  });

  it('stops at an interrupt and skips the checks not yet started', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const definitions = checks([{ command: 'sleep 30' }, { file: 'anything.txt' }]);
    const results = await runChecks(definitions, input({ signal: controller.signal }));
    expect(results[0]).toMatchObject({ passed: false, detail: expect.stringContaining('was interrupted') });
    expect(results[1]).toMatchObject({ name: 'anything.txt exists', passed: false, skipped: true, detail: 'the run was interrupted' });
  });

  it('runs in the sandbox it is given, creating it once and only when a command needs it', async () => {
    const created: Sandbox[] = [];
    const sandbox = async () => {
      const host = await HostSandbox.create({ workspace, options: readSandboxOptions({}) });
      created.push(host);
      return host;
    };
    writeFileSync(join(workspace, 'a.txt'), 'a');
    expect((await runChecks(checks([{ file: 'a.txt' }]), input({ sandbox })))[0].passed).toBe(true);
    expect(created).toHaveLength(0);
    const results = await runChecks(checks([{ command: 'true' }, { command: 'test -f a.txt' }]), input({ sandbox }));
    expect(results.map((result) => result.passed)).toEqual([true, true]);
    expect(created).toHaveLength(1);
    await created[0].dispose();
  });

  it.skipIf(!bwrap.usable)('runs inside a bubblewrap sandbox, which has its own home and no network', async () => {
    const sandbox = await createSandbox({ kind: 'bwrap', network: false, options: {}, workspace, runDirectory: root, runId: 'checks' });
    try {
      const result = await runOne(
        { command: 'test "$HOME" = /tmp && test "$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " ")" = lo && touch made-inside' },
        { sandbox },
      );
      expect(result.detail).toContain('exited with status 0');
      expect(result.passed).toBe(true);
      expect(readFileSync(join(workspace, 'made-inside'), 'utf8')).toBe('');
    } finally {
      await sandbox.dispose();
    }
  });

  it('fails with the reason when the sandbox cannot be created', async () => {
    const result = await runOne({ command: 'true' }, { sandbox: async () => { throw new Error('docker is not running'); } });
    expect(result.passed).toBe(false);
    expect(result.detail).toBe('`true` could not be run: docker is not running');
  });
});

describe('file checks', () => {
  it('passes when the file exists and fails when it is missing or a folder', async () => {
    writeFileSync(join(workspace, 'present.txt'), '');
    mkdirSync(join(workspace, 'folder'));
    expect(await runOne({ file: 'present.txt' })).toMatchObject({ kind: 'file', passed: true });
    expect(await runOne({ file: 'absent.txt' })).toMatchObject({ passed: false, detail: 'absent.txt does not exist in the workspace' });
    expect(await runOne({ file: 'folder' })).toMatchObject({ passed: false, detail: 'folder is not a regular file' });
  });

  it('refuses paths that leave the workspace, by climbing out or through a link', async () => {
    writeFileSync(join(root, 'outside.txt'), 'secret');
    symlinkSync(join(root, 'outside.txt'), join(workspace, 'link.txt'));
    const climbing = await runOne({ file: '../outside.txt' });
    expect(climbing.passed).toBe(false);
    expect(climbing.detail).toContain('is outside the workspace');
    const absolute = await runOne({ file: join(root, 'outside.txt') });
    expect(absolute.passed).toBe(false);
    expect(absolute.detail).toContain('is outside the workspace');
    const linked = await runOne({ file: 'link.txt' });
    expect(linked.passed).toBe(false);
    expect(linked.detail).toContain('leads outside the workspace through a symbolic link');
  });

  const reportSchema = {
    type: 'object',
    required: ['title', 'count'],
    properties: { title: { type: 'string' }, count: { type: 'integer', minimum: 1 } },
    additionalProperties: false,
  };

  it('checks a JSON file against a schema and lists each mismatch', async () => {
    writeFileSync(join(workspace, 'good.json'), JSON.stringify({ title: 'Report', count: 2 }));
    writeFileSync(join(workspace, 'bad.json'), JSON.stringify({ count: 0, extra: true }));
    expect(await runOne({ file: 'good.json', schema: reportSchema })).toMatchObject({ passed: true });
    const bad = await runOne({ file: 'bad.json', schema: reportSchema });
    expect(bad.passed).toBe(false);
    expect(bad.detail).toContain('bad.json does not match its schema:');
    expect(bad.detail).toContain("the document must have required property 'title'");
    expect(bad.detail).toContain("the document must NOT have additional properties ('extra')");
    expect(bad.detail).toContain('/count must be >= 1');
  });

  it('reports a file that is not JSON', async () => {
    writeFileSync(join(workspace, 'broken.json'), '{"title": ');
    const result = await runOne({ file: 'broken.json', schema: reportSchema });
    expect(result.passed).toBe(false);
    expect(result.detail).toMatch(/^broken\.json is not valid JSON: /);
  });

  it('reads .yaml and .yml files as YAML', async () => {
    writeFileSync(join(workspace, 'good.yaml'), 'title: Report\ncount: 3\n');
    writeFileSync(join(workspace, 'bad.yml'), 'title: [unclosed\n');
    writeFileSync(join(workspace, 'wrong.yaml'), 'title: 5\ncount: 3\n');
    expect(await runOne({ file: 'good.yaml', schema: reportSchema })).toMatchObject({ passed: true });
    expect((await runOne({ file: 'bad.yml', schema: reportSchema })).detail).toMatch(/^bad\.yml is not valid YAML: /);
    expect((await runOne({ file: 'wrong.yaml', schema: reportSchema })).detail).toContain('/title must be string');
  });

  it('searches the text for a pattern, with ^ and $ at line boundaries', async () => {
    writeFileSync(join(workspace, 'README.md'), 'Intro\n# Usage\nRun it.\n');
    expect(await runOne({ file: 'README.md', matches: '^# Usage$' })).toMatchObject({ passed: true });
    const missing = await runOne({ file: 'README.md', matches: '^# Install' });
    expect(missing).toMatchObject({ passed: false, detail: 'README.md has no match for /^# Install/' });
  });

  it('applies both schema and pattern when both are given', async () => {
    writeFileSync(join(workspace, 'data.json'), JSON.stringify({ title: 'Draft', count: 1 }));
    const result = await runOne({ file: 'data.json', schema: reportSchema, matches: '"title":\\s*"Final"' });
    expect(result).toMatchObject({ passed: false, detail: 'data.json has no match for /"title":\\s*"Final"/' });
  });
});

describe('answer checks', () => {
  const responseSchema = { type: 'object', required: ['city'], properties: { city: { type: 'string' } } };

  it('holds a structured answer to the response schema', async () => {
    expect(await runOne({ answer: 'matches_response' }, { responseSchema, structured: { city: 'Kyoto' } })).toMatchObject({ kind: 'answer', passed: true });
    const wrong = await runOne({ answer: 'matches_response' }, { responseSchema, structured: { town: 'Kyoto' } });
    expect(wrong.passed).toBe(false);
    expect(wrong.detail).toContain("must have required property 'city'");
  });

  it('reads a text answer as JSON, fenced or not', async () => {
    expect(await runOne({ answer: 'matches_response' }, { responseSchema, answer: '```json\n{"city": "Osaka"}\n```' })).toMatchObject({ passed: true });
    const prose = await runOne({ answer: 'matches_response' }, { responseSchema, answer: 'The city is Osaka.' });
    expect(prose).toMatchObject({ passed: false, detail: 'the answer does not match the response schema: the answer is not JSON' });
  });

  it('searches the answer for a pattern', async () => {
    expect(await runOne({ answer_matches: '^All \\d+ tests pass' }, { answer: 'Summary:\nAll 12 tests pass.' })).toMatchObject({ kind: 'answer_matches', passed: true });
    expect(await runOne({ answer_matches: 'tests pass' }, { answer: 'I could not run the tests.' })).toMatchObject({
      passed: false,
      detail: 'the answer has no match for /tests pass/',
    });
  });
});

describe('the retry prompt', () => {
  const failed = (name: string, detail: string): CheckResult => ({ name, kind: 'command', passed: false, detail, durationMs: 1 });

  it('lists each failed check with its output and leaves out passes and skips', () => {
    const prompt = retryPrompt([
      failed('unit tests', '`npm test` exited with status 1; output:\nExpected 4, got 5'),
      { name: 'lint', kind: 'command', passed: true, detail: 'exited with status 0', durationMs: 1 },
      { name: 'later', kind: 'file', passed: false, skipped: true, detail: 'the run was interrupted', durationMs: 0 },
      { name: 'report.json exists', kind: 'file', passed: false, detail: 'report.json does not exist in the workspace', durationMs: 1 },
    ]);
    expect(prompt).toContain("2 of the recipe's checks failed");
    expect(prompt).toContain('1. unit tests (command check)\n   `npm test` exited with status 1; output:\n   Expected 4, got 5');
    expect(prompt).toContain('2. report.json exists (file check)\n   report.json does not exist in the workspace');
    expect(prompt).not.toContain('lint');
    expect(prompt).not.toContain('later');
    expect(prompt).toContain('Fix these problems so that the checks pass, then finish again.');
  });

  it('stays bounded however much the checks printed', () => {
    const huge = Array.from({ length: 20 }, (_, index) => failed(`check ${index}`, `start ${index} ${'y'.repeat(50_000)} end ${index}`));
    const prompt = retryPrompt(huge);
    expect(prompt.length).toBeLessThanOrEqual(8000);
    expect(prompt).toContain('1. check 0 (command check)');
    expect(prompt).toContain('Fix these problems');
  });
});

describe('attempts until the checks pass', () => {
  const traceOf = () => {
    const events: Array<{ type: string; data: Record<string, unknown> }> = [];
    return { events, trace: { emit: (type: string, data: Record<string, unknown>) => events.push({ type, data }) } };
  };

  it('retries with the failures, after running on_failure, until the checks pass', async () => {
    const { events, trace } = traceOf();
    const prompts: Array<string | undefined> = [];
    const result = await attemptWithChecks({
      checks: checks([{ file: 'result.txt', matches: '^ok$' }, { command: 'test ! -e scratch.tmp', name: 'no scratch files' }]),
      retry: { maxAttempts: 3, onFailure: 'rm -f scratch.tmp && echo cleaned' },
      checkInput: { workspace, signal: new AbortController().signal },
      trace,
      attempt: async (retryText, attemptNumber) => {
        prompts.push(retryText);
        writeFileSync(join(workspace, 'scratch.tmp'), '');
        if (attemptNumber === 2) writeFileSync(join(workspace, 'result.txt'), 'ok\n');
        if (attemptNumber === 2) rmSync(join(workspace, 'scratch.tmp'));
        return { status: 'success', answer: `attempt ${attemptNumber}` };
      },
    });
    expect(result).toMatchObject({ attempts: 2, checksFailed: false, interrupted: false, outcome: { answer: 'attempt 2' } });
    expect(result.checks.map((check) => check.passed)).toEqual([true, true]);
    expect(prompts[0]).toBeUndefined();
    expect(prompts[1]).toContain('1. result.txt matches /^ok$/ (file check)\n   result.txt does not exist in the workspace');
    expect(prompts[1]).toContain('2. no scratch files (command check)');
    expect(events.map((event) => event.type)).toEqual([checksEventType, retryEventType, checksEventType]);
    expect(events[0].data).toMatchObject({ attempt: 1, passed: false });
    expect(events[1].data).toEqual({
      attempt: 2,
      failedChecks: ['result.txt matches /^ok$/', 'no scratch files'],
      onFailure: { command: 'rm -f scratch.tmp && echo cleaned', ending: 'exited with status 0', output: 'cleaned' },
    });
    expect(events[2].data).toMatchObject({ attempt: 2, passed: true });
  });

  it('fails the run when the checks still fail after the last attempt', async () => {
    let attempts = 0;
    const result = await attemptWithChecks({
      checks: checks([{ answer_matches: 'never' }]),
      retry: { maxAttempts: 2 },
      checkInput: { workspace, signal: new AbortController().signal },
      attempt: async () => {
        attempts += 1;
        return { status: 'success', answer: 'nope' };
      },
    });
    expect(attempts).toBe(2);
    expect(result).toMatchObject({ attempts: 2, checksFailed: true, interrupted: false });
    expect(result.checks[0]).toMatchObject({ passed: false, detail: 'the answer has no match for /never/' });
  });

  it('skips the checks when the agent did not succeed, without retrying', async () => {
    const { events, trace } = traceOf();
    const result = await attemptWithChecks({
      checks: checks([{ command: 'true' }]),
      retry: { maxAttempts: 3 },
      checkInput: { workspace, signal: new AbortController().signal },
      trace,
      attempt: async () => ({ status: 'budget-exhausted', answer: 'The steps budget ran out.' }),
    });
    expect(result).toMatchObject({ attempts: 1, checksFailed: false });
    expect(result.checks).toEqual([
      { name: 'true', kind: 'command', passed: false, skipped: true, detail: 'the run ended with status budget-exhausted', durationMs: 0 },
    ]);
    expect(events).toEqual([]);
  });
});
