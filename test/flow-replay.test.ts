/**
 * A recorded flow replays offline through the built command: each step gets its own recorded
 * replies, whatever order the steps of a fan-out asked in, with recorded or real tool results.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runScripted, terminate, writeLoopFixture } from './support/loop-fixture.js';
import { readEvents, runCli } from './support/run-cli.js';

const flowRecipe = `version: 1
name: replayed-flow
parameters:
  topics: { type: list, default: [owls, bats, moths] }
plugins: [./tools]
flow:
  - name: research
    kind: parallel
    for_each: "{{topics}}"
    max_concurrency: 3
    step:
      kind: agent
      agent: { system_prompt: You research., tools: [echo, terminate] }
      prompt: "Research {{item}}."
  - name: report
    kind: agent
    agent: { system_prompt: You write., tools: [terminate] }
    prompt: "Report on {{steps.research.answers}}"
`;

describe('a recorded flow', () => {
  it('replays offline with recorded and with real tools, and matches', async () => {
    const fixture = writeLoopFixture();
    writeFileSync(join(fixture, 'recipe.yaml'), flowRecipe);
    // Branches take the turns in whatever order they ask; each replays with what it got.
    const branch = [{ toolCalls: [{ name: 'echo', arguments: { text: 'noted' } }] }, terminate('found')];
    const recorded = await runScripted([...branch, ...branch, ...branch, terminate('the report')], { fixture, args: ['--record', 'flow.jsonl'] });
    expect(recorded.exitCode, recorded.stderr).toBe(0);
    expect(recorded.json.answer).toBe('the report');
    expect(recorded.json.flowSteps.map((step: { path: string }) => step.path)).toEqual(expect.arrayContaining(['research/owls', 'research/bats', 'research/moths', 'research', 'report']));

    // Progress lines say which branch each belongs to.
    expect(recorded.stderr).toMatch(/^\[research\/owls step 1\/\d+\] echo\(text="noted"\)$/m);
    expect(recorded.stderr).toMatch(/^\[report step 1\/\d+\] terminate\(/m);

    const recordedPaths = readEvents(recorded.json.runDirectory).filter((event) => event.type === 'model-response').map((event) => event.path).sort();
    expect(new Set(recordedPaths)).toEqual(new Set(['research/owls', 'research/bats', 'research/moths', 'report']));
    for (const tools of ['recorded', 'real']) {
      const replay = await runCli(['replay', 'flow.jsonl', '--tools', tools, '--json'], { cwd: fixture });
      expect(replay.exitCode, replay.stderr).toBe(0);
      expect(replay.stderr).toContain('replay matched the recording');
      expect(replay.json.answer).toBe('the report');
      const responses = readEvents(replay.json.runDirectory).filter((event) => event.type === 'model-response');
      expect(responses.map((event) => event.path).sort()).toEqual(recordedPaths);
    }
  });
});
