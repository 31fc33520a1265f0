import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { probeBwrap } from '../runtime/services/sandbox/create-sandbox.js';
import { makeFixture, readEvents, repositoryRoot, runCli } from './support/run-cli.js';
import { packTarball, scratchProject } from './support/scratch-project.js';
import { scriptedModelName, startScriptedModelServer, type RecordedChatRequest, type ScriptedModelServer, type ScriptedTurn } from './support/scripted-model-server.js';

const packFolder = join(repositoryRoot, 'recipes', 'packs', 'travel-handbook');
const recordingInPack = join('node_modules', 'manus-travel-handbook', 'recordings', 'travel-handbook.jsonl');
const bwrap = await probeBwrap();
if (!bwrap.usable) console.warn(`the travel-handbook pack's runs with real tools are skipped: bubblewrap is not usable here (${bwrap.reason}), and its check runs python3 in the sandbox`);

/** The model's replies as the pack's recording has them: a run from them does what the recorded one did. */
function recordedTurns(): ScriptedTurn[] {
  const lines = readFileSync(join(packFolder, 'recordings', 'travel-handbook.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  return lines.filter((event) => event.type === 'model-response').map((event) => ({ content: event.content, toolCalls: event.toolCalls }));
}

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('the travel-handbook example pack, installed from its folder', () => {
  it('is linked by npm, listed, and replays its recording', async () => {
    const project = scratchProject([packFolder]);
    expect(lstatSync(join(project, 'node_modules', 'manus-travel-handbook')).isSymbolicLink()).toBe(true);
    const listed = await runCli(['packs'], { cwd: project });
    expect(listed.stdout).toContain('recipe manus-travel-handbook/travel-handbook: Research a trip');
    const replay = await runCli(['replay', recordingInPack, '--json'], { cwd: project });
    expect(replay.exitCode, replay.stderr).toBe(0);
    expect(replay.stderr).toContain('replay matched the recording');
  });
});

describe('the travel-handbook example pack, installed in a scratch project', () => {
  const tarball = packTarball(packFolder, makeFixture({}));
  const project = scratchProject([tarball]);

  it('installs with its recipe, agent, plugin and recording, and manus packs lists it', async () => {
    expect(existsSync(join(project, recordingInPack))).toBe(true);
    const result = await runCli(['packs', '--json'], { cwd: project });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.json).toEqual([expect.objectContaining({
      name: 'manus-travel-handbook',
      recipes: [expect.objectContaining({ run: 'manus-travel-handbook/travel-handbook' })],
      agents: ['travel_planner'],
      tools: ['trip_calendar', 'map_link'],
    })]);
  });

  it('validates whole with no errors', async () => {
    const result = await runCli(['validate', 'manus-travel-handbook'], { cwd: project });
    expect(result.stderr).toMatch(/0 error\(s\), 0 warning\(s\)/);
    expect(result.exitCode).toBe(0);
  });

  it('replays its recording offline, with no model configured', async () => {
    const result = await runCli(['replay', recordingInPack, '--json'], { cwd: project });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain('replay matched the recording');
    expect(result.json.status).toBe('success');
  });

  it.skipIf(!bwrap.usable)('replays its recording with the real tools, its own plugin included, and matches', async () => {
    const result = await runCli(['replay', recordingInPack, '--tools', 'real', '--json'], { cwd: project, timeoutMs: 60_000 });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain('replay matched the recording');
    expect(result.json.checks.every((check: { passed: boolean }) => check.passed)).toBe(true);
  });

  it.skipIf(!bwrap.usable)('runs as manus-travel-handbook/travel-handbook with the pack\'s agent and tools, and its checks pass', async () => {
    server = await startScriptedModelServer({ turns: recordedTurns() });
    const result = await runCli(
      ['run', 'manus-travel-handbook/travel-handbook', '--param', 'destination=Lisbon', '--param', 'dates=3 days in May', '--json', '--quiet'],
      { cwd: project, env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: scriptedModelName }, timeoutMs: 60_000 },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.json.checks.map((check: { name: string; passed: boolean }) => [check.name, check.passed])).toEqual([
      ['itinerary.md matches /[Dd]ay\\s*1/', true],
      ['handbook.html matches /<html/', true],
      ['handbook.html parses as HTML', true],
    ]);
    const first = server.requests.find((request) => request.path === '/v1/chat/completions') as RecordedChatRequest;
    expect(first.body.messages[0].content).toContain('You are a careful travel planner.');
    const ends = readEvents(result.json.runDirectory).filter((event) => event.type === 'tool-call-end');
    expect(ends[0]).toMatchObject({ tool: 'trip_calendar', content: 'Day 1: Wednesday 2027-05-05\nDay 2: Thursday 2027-05-06\nDay 3: Friday 2027-05-07' });
    expect(ends[1]).toMatchObject({ tool: 'map_link', content: 'https://www.openstreetmap.org/search?query=Belem%20Tower%2C%20Lisbon' });
    expect(readFileSync(join(result.json.workspace, 'handbook.html'), 'utf8')).toContain('<h1>Lisbon in 3 days</h1>');
  });

  it('shows in manus inspect the plugin it loads, with its hash, and the check command it runs', async () => {
    const result = await runCli(['inspect', 'manus-travel-handbook/travel-handbook'], { cwd: project });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('pack: manus-travel-handbook 0.1.0 (node_modules/manus-travel-handbook)');
    expect(result.stdout).toContain('  travel_planner (pack manus-travel-handbook, node_modules/manus-travel-handbook/agents.yaml)');
    expect(result.stdout).toMatch(/trip-tools\.ts {2}sha256:[0-9a-f]{64}/);
    expect(result.stdout).toContain('handbook.html parses as HTML: command: python3 -c');
  });
});
