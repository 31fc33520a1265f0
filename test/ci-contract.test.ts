import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEvents, runCli } from './support/run-cli.js';
import { runScripted, terminate, writeLoopFixture } from './support/loop-fixture.js';
import type { ScriptedTurn } from './support/scripted-model-server.js';

const writeFile = (path: string, text: string): ScriptedTurn => ({
  toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'create', path, file_text: text } }],
});

const tools = ['str_replace_editor', 'echo', 'terminate'];

describe('checks', () => {
  it('passes when the agent produced what the checks ask, and writes the reports', async () => {
    const run = await runScripted([writeFile('report.md', '# Report\n## Summary\nAll good.\n'), terminate('written')], {
      tools,
      recipeExtra: 'checks:\n  - file: report.md\n    matches: "^## Summary"\n  - command: test -s report.md\n    name: report is not empty',
      args: ['--report', 'reports', '--ci'],
    });
    expect(run.exitCode).toBe(0);
    expect(run.json.checks.map((check: { name: string; passed: boolean }) => [check.name, check.passed])).toEqual([
      ['report.md matches /^## Summary/', true],
      ['report is not empty', true],
    ]);
    const report = JSON.parse(readFileSync(join(run.fixture, 'reports', 'manus-report.json'), 'utf8'));
    expect(report).toMatchObject({ runId: run.json.runId, status: 'success', exitCode: 0, attempts: 1 });
    const junit = readFileSync(join(run.fixture, 'reports', 'manus-junit.xml'), 'utf8');
    expect(junit).toContain('<testsuite');
    expect(junit).toMatch(/tests="3"/);
    expect(junit).toMatch(/failures="0"/);
    expect(run.stderr).not.toMatch(/\u001b\[/);
    // The progress says the checks passed, not only `runs show`.
    expect(run.stderr).toContain('checks: 2 of 2 passed\n');
  });

  it('gives the agent another attempt with the failures, after the on_failure command', async () => {
    const run = await runScripted([
      writeFile('answer.json', '{"total": "twelve"}'),
      terminate('first try'),
      { toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'create', path: 'answer.json', file_text: '{"total": 12}' } }] },
      terminate('second try'),
    ], {
      tools,
      recipeExtra: [
        'checks:',
        '  - file: answer.json',
        '    schema: { type: object, required: [total], properties: { total: { type: integer } } }',
        'retry:',
        '  max_attempts: 2',
        '  on_failure: rm -f answer.json',
      ].join('\n'),
    });
    expect(run.exitCode).toBe(0);
    expect(run.json).toMatchObject({ status: 'success', answer: 'second try', attempts: 2 });
    const retryRequest = run.requests[2].body.messages as Array<{ role: string; content: string }>;
    expect(retryRequest.at(-1)!.role).toBe('user');
    expect(JSON.stringify(retryRequest)).toContain('answer.json');
    const events = readEvents(run.json.runDirectory);
    expect(events.filter((event) => event.type === 'checks').map((event) => event.passed)).toEqual([false, true]);
    expect(events.find((event) => event.type === 'retry')).toMatchObject({ attempt: 2 });
  });

  it('fails with exit 1 and lists each failed check when attempts run out', async () => {
    const run = await runScripted([writeFile('notes.txt', 'draft'), terminate('done')], {
      tools,
      recipeExtra: 'checks:\n  - file: missing.md\n  - command: "false"\n    name: always fails\n  - answer_matches: "^done$"',
      args: ['--report', 'reports'],
    });
    expect(run.exitCode).toBe(1);
    expect(run.json.status).toBe('checks-failed');
    expect(run.stderr).toContain('check failed: missing.md exists');
    expect(run.stderr).toContain('check failed: always fails');
    expect(run.stderr).not.toContain('check failed: answer');
    expect(run.stderr).toContain('checks: 1 of 3 passed, 2 failed\n');
    const junit = readFileSync(join(run.fixture, 'reports', 'manus-junit.xml'), 'utf8');
    expect(junit).toMatch(/failures="[1-9]/);
  });

  it('reports checks as skipped when the agent itself did not succeed', async () => {
    const run = await runScripted([terminate('gave up', 'failure')], { tools, recipeExtra: 'checks:\n  - file: x.md' });
    expect(run.exitCode).toBe(1);
    expect(run.json.status).toBe('failure');
    expect(run.json.checks[0]).toMatchObject({ skipped: true, passed: false });
  });

  it('rejects a check whose pattern does not compile before any model call', async () => {
    const run = await runScripted([terminate()], { tools, recipeExtra: 'checks:\n  - answer_matches: "([unclosed"' });
    expect(run.exitCode).toBe(2);
    expect(run.requests).toHaveLength(0);
    expect(run.stderr).toMatch(/recipe\.yaml:\d+:\d+/);
  });
});

describe('the runs listing', () => {
  it('lists runs and shows a transcript', async () => {
    const fixture = writeLoopFixture();
    const first = await runScripted([{ content: 'Echoing.', toolCalls: [{ name: 'echo', arguments: { text: 'transcript me' } }] }, terminate('all done')], { fixture });
    expect(first.exitCode).toBe(0);
    const listing = await runCli(['runs', '--json'], { cwd: fixture });
    expect(listing.exitCode).toBe(0);
    expect(listing.json[0]).toMatchObject({ id: first.json.runId, recipe: 'loop-test', status: 'success', steps: 2 });
    const shown = await runCli(['runs', 'show', first.json.runId.slice(0, 17)], { cwd: fixture });
    expect(shown.exitCode).toBe(0);
    expect(shown.stdout).toContain('Do the task.');
    expect(shown.stdout).toContain('transcript me');
    expect(shown.stdout).toContain('all done');
    const missing = await runCli(['runs', 'show', 'nothing-here'], { cwd: fixture });
    expect(missing.exitCode).toBe(2);
    expect(existsSync(join(fixture, '.manus', 'runs'))).toBe(true);
  });
});
