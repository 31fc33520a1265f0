import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exitCodeForError } from '../cli/exit-codes.js';
import { runsCommand, showRunCommand, type CommandOutput } from '../cli/runs-command.js';
import { formatDuration } from '../runtime/applications/reports/display-format.js';
import { listRuns, readRun, RunLookupError } from '../runtime/runs/run-history.js';
import { terminate, writeLoopFixture } from './support/loop-fixture.js';
import { readEvents, runCli } from './support/run-cli.js';
import { startScriptedModelServer, type ScriptedTurn } from './support/scripted-model-server.js';

let runsDirectory: string;

beforeEach(() => {
  runsDirectory = join(realpathSync(mkdtempSync(join(tmpdir(), 'manus-runs-'))), 'runs');
  mkdirSync(runsDirectory);
});

afterEach(() => {
  rmSync(join(runsDirectory, '..'), { recursive: true, force: true });
});

interface EventBody {
  type: string;
  [field: string]: unknown;
}

type Event = EventBody & { time: string };

/** Events stamped one second apart from `startedAt`, as the runtime writes them. */
function stamped(startedAt: string, events: EventBody[]): Event[] {
  const start = Date.parse(startedAt);
  return events.map((event, index) => ({ ...event, time: new Date(start + index * 1000).toISOString() }));
}

function writeRun(id: string, events: Event[], trailing = ''): void {
  mkdirSync(join(runsDirectory, id), { recursive: true });
  writeFileSync(join(runsDirectory, id, 'events.jsonl'), events.map((event) => `${JSON.stringify(event)}\n`).join('') + trailing);
}

function runStart(id: string, recipe: string, extra: Record<string, unknown> = {}): EventBody {
  return {
    type: 'run-start',
    runId: id,
    recipe: { name: recipe, file: `recipes/${recipe}.yaml` },
    agent: 'swe',
    model: { profile: 'default', provider: 'openai', baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini' },
    budgets: { steps: 20 },
    tools: ['bash', 'terminate'],
    task: 'Build the site\nfrom the notes.',
    workspace: '/workspace',
    ...extra,
  };
}

const usage = { promptTokens: 1200, completionTokens: 345, totalTokens: 1545 };

/** A run that listed files, failed a check, retried and succeeded. */
function completedRun(id: string, startedAt: string, recipe = 'build-site'): Event[] {
  return stamped(startedAt, [
    runStart(id, recipe),
    { type: 'model-request', step: 1, messages: 2, tools: 2 },
    {
      type: 'model-response',
      step: 1,
      content: 'I will list the files.',
      toolCalls: [{ id: 'call_1', name: 'bash', arguments: '{"command":"ls"}' }],
      usage: { promptTokens: 500, completionTokens: 20, totalTokens: 520 },
    },
    { type: 'tool-call-start', step: 1, callId: 'call_1', tool: 'bash', arguments: { command: 'ls' } },
    { type: 'tool-call-end', step: 1, callId: 'call_1', tool: 'bash', isError: false, content: 'notes.md\nstyle.css', durationMs: 120 },
    { type: 'step-end', step: 1, kind: 'continue', usage: { promptTokens: 500, completionTokens: 20, totalTokens: 520 } },
    { type: 'tool-log', level: 'info', tool: 'bash', message: 'not shown' },
    { type: 'model-response', step: 2, content: 'Done.', toolCalls: [], usage },
    { type: 'step-end', step: 2, kind: 'finished', usage },
    {
      type: 'checks',
      attempt: 1,
      passed: false,
      results: [
        { name: 'site builds', kind: 'command', passed: true, detail: 'exited with status 0', durationMs: 300 },
        { name: 'index.html exists', kind: 'file', passed: false, detail: 'index.html does not exist in the workspace', durationMs: 1 },
      ],
    },
    { type: 'retry', attempt: 2, failedChecks: ['index.html exists'], onFailure: { command: 'make clean', ending: 'exited with status 0', output: 'cleaned' } },
    { type: 'model-response', step: 3, content: 'Wrote index.html.', toolCalls: [], usage },
    { type: 'checks', attempt: 2, passed: true, results: [{ name: 'index.html exists', kind: 'file', passed: true, detail: 'ok', durationMs: 1 }] },
    {
      type: 'run-end',
      status: 'success',
      exitCode: 0,
      answer: 'The site is built:\nindex.html',
      steps: 3,
      usage,
      files: ['index.html'],
      durationMs: 4200,
    },
  ]);
}

function capture(): CommandOutput & { stdout: () => string; stderr: () => string } {
  let out = '';
  let error = '';
  return {
    out: (text) => (out += text),
    error: (text) => (error += text),
    stdout: () => out,
    stderr: () => error,
  };
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

describe('listing runs', () => {
  it('summarises each run folder, newest first', async () => {
    writeRun('20250101-100000-aaaaaa', completedRun('20250101-100000-aaaaaa', '2025-01-01T10:00:00.000Z'));
    writeRun(
      '20250102-100000-bbbbbb',
      stamped('2025-01-02T10:00:00.000Z', [
        runStart('20250102-100000-bbbbbb', 'research'),
        { type: 'step-end', step: 1, usage },
        {
          type: 'run-end',
          status: 'budget-exhausted',
          exitCode: 3,
          answer: 'The steps budget ran out.',
          steps: 1,
          usage,
          cost: 0.0123,
          exhaustedBudget: 'steps',
          durationMs: 61_000,
        },
      ]),
    );
    mkdirSync(join(runsDirectory, 'not-a-run'));
    writeFileSync(join(runsDirectory, 'stray.txt'), 'x');

    const runs = await listRuns(runsDirectory);
    expect(runs).toEqual([
      {
        id: '20250102-100000-bbbbbb',
        directory: join(runsDirectory, '20250102-100000-bbbbbb'),
        recipe: 'research',
        status: 'budget-exhausted',
        exitCode: 3,
        steps: 1,
        totalTokens: 1545,
        cost: 0.0123,
        started: '2025-01-02T10:00:00.000Z',
        durationMs: 61_000,
        model: 'gpt-4o-mini',
        warnings: [],
      },
      {
        id: '20250101-100000-aaaaaa',
        directory: join(runsDirectory, '20250101-100000-aaaaaa'),
        recipe: 'build-site',
        status: 'success',
        exitCode: 0,
        steps: 3,
        totalTokens: 1545,
        cost: undefined,
        started: '2025-01-01T10:00:00.000Z',
        durationMs: 4200,
        model: 'gpt-4o-mini',
        warnings: [],
      },
    ]);
  });

  it('has no runs when the runs folder does not exist', async () => {
    expect(await listRuns(join(runsDirectory, 'missing'))).toEqual([]);
  });

  it('skips a cut-off last line and malformed lines with warnings, and calls a run without an end incomplete', async () => {
    const events = stamped('2025-01-03T10:00:00.000Z', [
      runStart('20250103-100000-cccccc', 'build-site'),
      { type: 'model-response', step: 1, content: 'Working.', toolCalls: [] },
      { type: 'step-end', step: 1, usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 } },
      { type: 'model-response', step: 2, content: 'Still working.', toolCalls: [] },
    ]);
    const lines = events.map((event) => JSON.stringify(event));
    lines.splice(2, 0, 'not json at all', '[1, 2]');
    mkdirSync(join(runsDirectory, '20250103-100000-cccccc'));
    writeFileSync(join(runsDirectory, '20250103-100000-cccccc', 'events.jsonl'), `${lines.join('\n')}\n{"type":"tool-call-start","step":2,"callId":"cal`);

    const [run] = await listRuns(runsDirectory);
    expect(run).toMatchObject({ status: 'incomplete', steps: 2, totalTokens: 15, recipe: 'build-site', durationMs: 3000 });
    expect(run.exitCode).toBeUndefined();
    expect(run.warnings).toEqual([
      'line 3 of events.jsonl is not a valid event; it was skipped',
      'line 4 of events.jsonl is not a valid event; it was skipped',
      'the last line of events.jsonl was cut off (the run stopped while writing it); it was skipped',
    ]);
  });

  it('calls a run without an end running while the process that started it is alive', async () => {
    writeRun('20250104-100000-alive0', stamped('2025-01-04T10:00:00.000Z', [runStart('20250104-100000-alive0', 'live', { pid: process.pid, host: hostname() })]));
    writeRun('20250104-100000-dead00', stamped('2025-01-04T09:00:00.000Z', [runStart('20250104-100000-dead00', 'dead', { pid: deadPid(), host: hostname() })]));
    writeRun(
      '20250104-100000-remote',
      stamped('2025-01-04T08:00:00.000Z', [runStart('20250104-100000-remote', 'remote', { pid: process.pid, host: `not-${hostname()}` })]),
    );
    const statuses = (await listRuns(runsDirectory)).map((run) => [run.recipe, run.status]);
    expect(statuses).toEqual([
      ['live', 'running'],
      ['dead', 'incomplete'],
      ['remote', 'incomplete'],
    ]);
  });

  it('treats a run resumed after its end as not ended', async () => {
    const events = completedRun('20250105-100000-resume', '2025-01-05T10:00:00.000Z');
    events.push({ type: 'run-resume', runId: '20250105-100000-resume', step: 3, time: '2025-01-05T11:00:00.000Z' });
    writeRun('20250105-100000-resume', events);
    const [run] = await listRuns(runsDirectory);
    expect(run.status).toBe('incomplete');
    // The first part's recorded 4.2 s; the resumed part has no events after its start, and the hour between is a gap.
    expect(run.durationMs).toBe(4200);
  });

  it('adds up the parts of a resumed run, even when only the end of its file is read', async () => {
    const id = '20250105-120000-parts0';
    const events = stamped('2025-01-05T12:00:00.000Z', [
      runStart(id, 'parts'),
      // Enough output that a listing reads only the start and the end of the file, not this part's end.
      ...Array.from({ length: 40 }, (_, index) => ({ type: 'tool-call-end', step: 1, callId: `c${index}`, tool: 'bash', isError: false, content: 'x'.repeat(10_000) })),
      { type: 'run-end', status: 'budget-exhausted', exitCode: 3, steps: 2, usage, durationMs: 1500 },
      { type: 'run-resume', runId: id, step: 2, earlierDurationMs: 1500 },
      { type: 'model-response', step: 3, content: 'Done.', toolCalls: [] },
      { type: 'run-end', status: 'success', exitCode: 0, steps: 3, usage, durationMs: 2500 },
    ]);
    // The resume came an hour later; that hour is not part of the run.
    events.slice(-3).forEach((event) => (event.time = new Date(Date.parse(event.time) + 3_600_000).toISOString()));
    writeRun(id, events);
    const [run] = await listRuns(runsDirectory);
    expect(run).toMatchObject({ status: 'success', durationMs: 4000 });
    // An events file small enough to be read whole adds up its parts without the carried total.
    const small = [events[0], ...events.slice(-4)].map((event) => (event.type === 'run-resume' ? { ...event, earlierDurationMs: undefined } : event));
    writeRun(id, small);
    expect((await listRuns(runsDirectory))[0].durationMs).toBe(4000);
  });

  it('lists a run resumed with the CLI with the time of both parts', async () => {
    const fixture = writeLoopFixture({ agentExtra: 'max_steps: 2' });
    const echo = (text: string): ScriptedTurn => ({ toolCalls: [{ name: 'echo', arguments: { text } }] });
    const withModel = async (turns: ScriptedTurn[], args: string[]) => {
      const server = await startScriptedModelServer({ turns });
      try {
        return await runCli(args, { cwd: fixture, env: { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model' } });
      } finally {
        await server.close();
      }
    };
    const first = await withModel([echo('1'), echo('2')], ['run', 'recipe.yaml', '--json']);
    expect(first.exitCode).toBe(3);
    const resumed = await withModel([echo('3'), terminate('done in four')], ['resume', first.json.runId, '--max-steps', '4', '--json']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const ends = readEvents(resumed.json.runDirectory).filter((event) => event.type === 'run-end');
    expect(ends).toHaveLength(2);
    const whole = ends[0].durationMs + ends[1].durationMs;
    expect(readEvents(resumed.json.runDirectory).find((event) => event.type === 'run-resume')?.earlierDurationMs).toBe(ends[0].durationMs);
    const listing = await runCli(['runs', '--json'], { cwd: fixture });
    expect(listing.exitCode).toBe(0);
    expect(listing.json).toHaveLength(1);
    expect(listing.json[0]).toMatchObject({ id: first.json.runId, status: 'success', steps: 4, durationMs: whole });
    const table = await runCli(['runs'], { cwd: fixture });
    expect(table.stdout).toContain(formatDuration(whole));
  });

  it('reads only the start and end of a long events file, even when its last line is longer than the window', async () => {
    const bulky = Array.from({ length: 60 }, (_, index) => ({
      type: 'tool-call-end',
      step: index + 1,
      callId: `call_${index}`,
      tool: 'bash',
      isError: false,
      content: 'x'.repeat(10_000),
      durationMs: 5,
    }));
    const longAnswer = `answer start ${'y'.repeat(700_000)} answer end`;
    writeRun(
      '20250106-100000-long00',
      stamped('2025-01-06T10:00:00.000Z', [
        runStart('20250106-100000-long00', 'long-run'),
        ...bulky,
        { type: 'step-end', step: 60, usage },
        { type: 'run-end', status: 'failure', exitCode: 1, answer: longAnswer, steps: 60, usage, durationMs: 90_000 },
      ]),
    );
    writeRun(
      '20250106-090000-long01',
      stamped('2025-01-06T09:00:00.000Z', [runStart('20250106-090000-long01', 'long-cut'), ...bulky]),
      '{"type":"step-end","step":61,"usa',
    );
    const [finished, cut] = await listRuns(runsDirectory);
    expect(finished).toMatchObject({ recipe: 'long-run', status: 'failure', exitCode: 1, steps: 60, totalTokens: 1545, durationMs: 90_000, warnings: [] });
    expect(cut).toMatchObject({ recipe: 'long-cut', status: 'incomplete', steps: 60, totalTokens: 0, durationMs: 60_000 });
    expect(cut.warnings).toEqual(['the last line of events.jsonl was cut off (the run stopped while writing it); it was skipped']);
  });
});

describe('reading one run', () => {
  beforeEach(() => {
    writeRun('20250201-100000-abc123', completedRun('20250201-100000-abc123', '2025-02-01T10:00:00.000Z'));
    writeRun('20250201-100000-abd456', completedRun('20250201-100000-abd456', '2025-02-01T10:00:00.000Z', 'other'));
  });

  it('finds a run by its full id or by a unique prefix', async () => {
    const exact = await readRun(runsDirectory, '20250201-100000-abc123');
    expect(exact.summary.id).toBe('20250201-100000-abc123');
    expect(exact.events).toHaveLength(14);
    expect(exact.events[0].type).toBe('run-start');
    const byPrefix = await readRun(runsDirectory, '20250201-100000-abd');
    expect(byPrefix.summary.recipe).toBe('other');
  });

  it('refuses an ambiguous prefix, naming the runs it matches', async () => {
    const failure = await readRun(runsDirectory, '20250201').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RunLookupError);
    expect(failure).toMatchObject({
      code: 'run_ambiguous',
      message: "'20250201' matches 2 runs (20250201-100000-abd456, 20250201-100000-abc123); give more of the id",
    });
    expect(exitCodeForError(failure)).toBe(2);
  });

  it('refuses an unknown id', async () => {
    await expect(readRun(runsDirectory, '2024')).rejects.toMatchObject({
      code: 'run_not_found',
      message: `unknown run '2024': no run in ${runsDirectory} has an id starting with '2024'`,
    });
    await expect(readRun(join(runsDirectory, 'empty'), 'x')).rejects.toMatchObject({ code: 'run_not_found' });
  });
});

describe('manus runs', () => {
  it('prints a table of runs, newest first', async () => {
    writeRun('20250301-100000-first0', completedRun('20250301-100000-first0', '2025-03-01T10:00:00.000Z', 'first-recipe'));
    writeRun('20250302-100000-second', stamped('2025-03-02T10:00:00.000Z', [runStart('20250302-100000-second', 'second-recipe')]));
    const output = capture();
    expect(await runsCommand({ runsDir: runsDirectory }, output)).toBe(0);
    const lines = output.stdout().trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +RECIPE +STATUS +STEPS +TOKENS +COST +STARTED +DURATION$/);
    expect(lines[1]).toMatch(/^20250302-100000-second +second-recipe +incomplete +0 +0 +- +2025-03-0\d \d\d:\d\d:00 +0 ms$/);
    expect(lines[2]).toMatch(/^20250301-100000-first0 +first-recipe +success +3 +1,545 +- +2025-03-0\d \d\d:\d\d:00 +4\.2 s$/);
    expect(lines).toHaveLength(3);
    expect(output.stderr()).toBe('');
  });

  it('prints JSON with --json', async () => {
    writeRun('20250301-100000-first0', completedRun('20250301-100000-first0', '2025-03-01T10:00:00.000Z'));
    const output = capture();
    expect(await runsCommand({ runsDir: runsDirectory, json: true }, output)).toBe(0);
    expect(JSON.parse(output.stdout())).toEqual([expect.objectContaining({ id: '20250301-100000-first0', status: 'success', steps: 3, totalTokens: 1545 })]);
  });

  it('says so when there are no runs, on stderr', async () => {
    const output = capture();
    expect(await runsCommand({ runsDir: runsDirectory }, output)).toBe(0);
    expect(output.stdout()).toBe('');
    expect(output.stderr()).toBe(`no runs in ${runsDirectory}\n`);
  });

  it('uses MANUS_RUNS_DIR when no folder is given, and reports skipped lines on stderr', async () => {
    writeRun('20250303-100000-broken', stamped('2025-03-03T10:00:00.000Z', [runStart('20250303-100000-broken', 'broken')]), '{"ty');
    const previous = process.env.MANUS_RUNS_DIR;
    process.env.MANUS_RUNS_DIR = runsDirectory;
    try {
      const output = capture();
      expect(await runsCommand({}, output)).toBe(0);
      expect(output.stdout()).toContain('20250303-100000-broken');
      expect(output.stderr()).toBe(
        'warning: run 20250303-100000-broken: the last line of events.jsonl was cut off (the run stopped while writing it); it was skipped\n',
      );
    } finally {
      if (previous === undefined) delete process.env.MANUS_RUNS_DIR;
      else process.env.MANUS_RUNS_DIR = previous;
    }
  });
});

describe('manus runs <id>', () => {
  it('prints the transcript: task, steps, tool calls, checks, retries and the end', async () => {
    writeRun('20250401-100000-show00', completedRun('20250401-100000-show00', '2025-04-01T10:00:00.000Z'));
    const output = capture();
    expect(await showRunCommand('20250401-100000-sh', { runsDir: runsDirectory }, output)).toBe(0);
    const transcript = output.stdout();
    expect(transcript).toMatch(/^Run: {7}20250401-100000-show00\nRecipe: {4}build-site \(recipes\/build-site\.yaml\)\nAgent: {5}swe\n/);
    expect(transcript).toContain('Model:     gpt-4o-mini (openai, profile default)\n');
    expect(transcript).toContain('\nTask:\n  Build the site\n  from the notes.\n');
    expect(transcript).toContain(
      '\nStep 1\n  assistant: I will list the files.\n  > bash {"command":"ls"}\n    ok (120 ms)\n      notes.md\n      style.css\n\nStep 2\n  assistant: Done.\n',
    );
    expect(transcript).toContain(
      '\nChecks after attempt 1: 1 passed, 1 failed\n  PASS site builds\n  FAIL index.html exists\n      index.html does not exist in the workspace\n',
    );
    expect(transcript).toContain(
      '\nRetry: attempt 2\n  because these checks failed: index.html exists\n  on_failure `make clean` exited with status 0\n      cleaned\n',
    );
    expect(transcript).toContain('\nStep 3\n  assistant: Wrote index.html.\n\nChecks after attempt 2: 1 passed, 0 failed\n');
    expect(transcript).toContain(
      '\nEnd: success (exit code 0)\n  steps: 3, tokens: 1,545 (1,200 prompt, 345 completion), cost: unknown, duration: 4.2 s\n  files: index.html\nAnswer:\n  The site is built:\n  index.html\n',
    );
    expect(transcript).not.toContain('not shown');
    expect(output.stderr()).toBe('');
  });

  it('shortens long tool arguments and results unless asked for everything', async () => {
    const long = `${'first part '.repeat(200)}THE MIDDLE${' last part'.repeat(200)}`;
    writeRun(
      '20250402-100000-long00',
      stamped('2025-04-02T10:00:00.000Z', [
        runStart('20250402-100000-long00', 'long'),
        { type: 'tool-call-start', step: 1, callId: 'c', tool: 'str_replace_editor', arguments: { command: 'create', file_text: long } },
        { type: 'tool-call-end', step: 1, callId: 'c', tool: 'str_replace_editor', isError: true, content: long, durationMs: 2500 },
      ]),
    );
    const short = capture();
    await showRunCommand('20250402-100000-long00', { runsDir: runsDirectory }, short);
    expect(short.stdout()).not.toContain('THE MIDDLE');
    expect(short.stdout()).toContain('characters omitted; shortened; --full shows all');
    expect(short.stdout()).toContain('    error (2.5 s)\n');
    const full = capture();
    await showRunCommand('20250402-100000-long00', { runsDir: runsDirectory, full: true }, full);
    expect(full.stdout().split('THE MIDDLE')).toHaveLength(3);
  });

  it('says when a run has no recorded end, after the warnings about its file', async () => {
    writeRun(
      '20250403-100000-cut000',
      stamped('2025-04-03T10:00:00.000Z', [runStart('20250403-100000-cut000', 'cut'), { type: 'step-end', step: 1, usage }]),
      '{"type":"model-resp',
    );
    const output = capture();
    expect(await showRunCommand('20250403-100000-cut000', { runsDir: runsDirectory }, output)).toBe(0);
    const transcript = output.stdout();
    expect(transcript.startsWith('warning: the last line of events.jsonl was cut off')).toBe(true);
    expect(transcript.endsWith('\nNo end recorded: the run stopped without recording its end.\n  steps: 1, tokens: 1,545, elapsed: 1.0 s\n')).toBe(true);
  });

  it('prints the summary and every event with --json', async () => {
    writeRun('20250404-100000-json00', completedRun('20250404-100000-json00', '2025-04-04T10:00:00.000Z'));
    const output = capture();
    expect(await showRunCommand('20250404-100000-json00', { runsDir: runsDirectory, json: true }, output)).toBe(0);
    const shown = JSON.parse(output.stdout());
    expect(shown).toMatchObject({ id: '20250404-100000-json00', status: 'success', steps: 3 });
    expect(shown.events).toHaveLength(14);
  });

  it('exits 2 with a message for an unknown or ambiguous id', async () => {
    writeRun('20250405-100000-aaaaaa', completedRun('20250405-100000-aaaaaa', '2025-04-05T10:00:00.000Z'));
    writeRun('20250405-100000-bbbbbb', completedRun('20250405-100000-bbbbbb', '2025-04-05T10:00:00.000Z'));
    const unknown = capture();
    expect(await showRunCommand('1999', { runsDir: runsDirectory }, unknown)).toBe(2);
    expect(unknown.stdout()).toBe('');
    expect(unknown.stderr()).toBe(`manus: unknown run '1999': no run in ${runsDirectory} has an id starting with '1999'\n`);
    const ambiguous = capture();
    expect(await showRunCommand('20250405', { runsDir: runsDirectory }, ambiguous)).toBe(2);
    expect(ambiguous.stderr()).toContain("manus: '20250405' matches 2 runs");
  });
});
