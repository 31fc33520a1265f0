import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findDataPython } from './support/data-python.js';
import { runScripted, terminate, writeLoopFixture } from './support/loop-fixture.js';
import { makeFixture, readEvents, repositoryRoot, runCli } from './support/run-cli.js';

const recordingsFolder = join(repositoryRoot, 'recipes', 'recordings');
const recordings = readdirSync(recordingsFolder).filter((name) => name.endsWith('.jsonl'));
const runStartOfFile = (file: string) => JSON.parse(readFileSync(file, 'utf8').split('\n')[0]);
const runStartOf = (name: string) => runStartOfFile(join(recordingsFolder, name));
/** The data-analysis demo's Python code imports pandas: replaying it with the real tools needs a Python that has it. */
const dataPython = findDataPython();
const needsDataPython = new Set(['data-analysis.jsonl']);
const realReplays = recordings.filter((name) => dataPython.python || !needsDataPython.has(name));
for (const name of recordings.filter((name) => !realReplays.includes(name))) console.warn(`${name} real-tools replay skipped: ${dataPython.reason}`);

describe('shipped recordings', () => {
  it('exist for the example recipes', () => {
    expect(recordings).toEqual(expect.arrayContaining(['ask.jsonl', 'country-facts.jsonl', 'data-analysis.jsonl', 'planning-flow.jsonl', 'project-tour.jsonl', 'swe.jsonl']));
  });

  it.each(recordings)('%s replays offline, with no model configured, and matches', async (name) => {
    const run = await runCli(['replay', join(recordingsFolder, name), '--json'], { cwd: makeFixture({}) });
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toContain('replay of recorded model replies');
    expect(run.stderr).toContain('replay matched the recording');
    expect(run.stderr).not.toContain('undefined');
    expect(run.stderr).toContain(`replaying model ${String(runStartOf(name).model.model)}`);
    expect(run.json.status).toBe('success');
  });

  it.each(realReplays)('%s replays with the real tools, as the README offers, and matches', async (name) => {
    const env = dataPython.python ? { MANUS_PYTHON: dataPython.python } : {};
    const run = await runCli(['replay', join(recordingsFolder, name), '--tools', 'real', '--json'], { cwd: makeFixture({}), env, timeoutMs: 60_000 });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain('replay matched the recording');
    expect(run.stderr).not.toContain('diverged');
    expect(run.json.status).toBe('success');
  });

  it('project-tour replays with the real filesystem MCP server, which reads the replay\'s own copy of the project', async () => {
    const folder = makeFixture({});
    const run = await runCli(['replay', join(recordingsFolder, 'project-tour.jsonl'), '--tools', 'real', '--workspace', 'tour', '--json'], { cwd: folder, timeoutMs: 60_000 });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain('replay matched the recording');
    const events = readEvents(run.json.runDirectory);
    const ready = events.find((event) => event.type === 'mcp-server-ready');
    expect(ready).toMatchObject({ server: 'files', tools: expect.arrayContaining(['mcp_files_read_text_file']) });
    // Only the reading tools are offered, as the recipe allows.
    expect(ready?.tools).not.toContain('mcp_files_write_file');
    expect(events.filter((event) => event.type === 'mcp-server-restart' || event.type === 'mcp-server-lost')).toEqual([]);
    expect(readFileSync(join(folder, 'tour', 'calculator.py'), 'utf8')).toContain('def average');
  });

  it('hold no machine paths: the swe recording names its recipe, its workspace template and the copy source relative to the project', () => {
    for (const name of recordings) expect(readFileSync(join(recordingsFolder, name), 'utf8')).not.toMatch(/\/(work|tmp|home|root|Users)\//);
    const start = runStartOf('swe.jsonl');
    expect(start.recipe).toMatchObject({ file: 'recipes/swe.yaml', workspace: '{{repository}}', overrides: { parameters: { repository: 'workspace/calculator-demo' } } });
    expect(start.workspaceSource).toBe('recipes/examples/calculator');
  });

  it('the data-analysis recording starts from the sample data and names its recipe relative to the project', () => {
    const start = runStartOf('data-analysis.jsonl');
    expect(start.recipe).toMatchObject({ file: 'recipes/data-analysis.yaml', overrides: { parameters: { data: 'sales.csv' } } });
    expect(start.workspaceSource).toBe('recipes/examples/sales');
    expect(start.tools).toEqual(expect.arrayContaining(['python_execute', 'chart_visualization']));
  });

  it('replay --tools real copies the recorded workspace source into --workspace, and leaves the source as it was', async () => {
    const folder = makeFixture({});
    const run = await runCli(['replay', join(recordingsFolder, 'swe.jsonl'), '--tools', 'real', '--workspace', 'fixed', '--json'], { cwd: folder, timeoutMs: 60_000 });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.json.workspace).toBe(join(folder, 'fixed'));
    expect(readFileSync(join(folder, 'fixed', 'calculator.py'), 'utf8')).toContain('return total(values) / len(values)');
    expect(readFileSync(join(folder, 'fixed', 'test_calculator.py'), 'utf8')).toBe(
      readFileSync(join(repositoryRoot, 'recipes', 'examples', 'calculator', 'test_calculator.py'), 'utf8'),
    );
    expect(readFileSync(join(repositoryRoot, 'recipes', 'examples', 'calculator', 'calculator.py'), 'utf8')).toContain('(len(values) - 1)');
    const start = readEvents(run.json.runDirectory).find((event) => event.type === 'run-start')!;
    expect(start).toMatchObject({ workspace: 'fixed', workspaceSource: expect.stringMatching(/recipes\/examples\/calculator$/), replayTools: 'real' });
  });

  it('refuses to copy the workspace source over a folder that has files, and changes none of them', async () => {
    const folder = makeFixture({ 'mine/notes.txt': 'my notes\n' });
    const run = await runCli(['replay', join(recordingsFolder, 'swe.jsonl'), '--tools', 'real', '--workspace', 'mine'], { cwd: folder });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/the workspace .*mine is not empty; a copy of .*recipes\/examples\/calculator goes only into a new or empty folder/);
    expect(readdirSync(join(folder, 'mine'))).toEqual(['notes.txt']);
    expect(existsSync(join(folder, '.manus', 'runs'))).toBe(false);
  });

  it('a run started with --workspace-from records its source, and its own recording replays with the real tools', async () => {
    const fixture = writeLoopFixture({ tools: ['str_replace_editor', 'terminate'] });
    cpSync(join(repositoryRoot, 'recipes', 'examples', 'calculator'), join(fixture, 'project'), { recursive: true });
    const edit = { command: 'str_replace', path: 'calculator.py', old_str: '(len(values) - 1)', new_str: 'len(values)' };
    const recorded = await runScripted(
      [{ toolCalls: [{ name: 'str_replace_editor', arguments: edit }] }, terminate('fixed')],
      { fixture, args: ['--workspace-from', 'project', '--record', 'demo.jsonl'] },
    );
    expect(recorded.exitCode, recorded.stderr).toBe(0);
    expect(readFileSync(join(fixture, 'project', 'calculator.py'), 'utf8')).toContain('(len(values) - 1)');
    expect(readFileSync(join(recorded.json.workspace, 'calculator.py'), 'utf8')).toContain('/ len(values)');
    expect(runStartOfFile(join(fixture, 'demo.jsonl')).workspaceSource).toBe('project');
    const replay = await runCli(['replay', 'demo.jsonl', '--tools', 'real', '--json'], { cwd: fixture });
    expect(replay.exitCode, replay.stderr).toBe(0);
    expect(replay.stderr).toContain('replay matched the recording');
    expect(replay.json.workspace).not.toBe(recorded.json.workspace);
  });
});
