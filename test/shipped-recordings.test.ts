import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeFixture, repositoryRoot, runCli } from './support/run-cli.js';

const recordings = readdirSync(join(repositoryRoot, 'recipes', 'recordings')).filter((name) => name.endsWith('.jsonl'));

describe('shipped recordings', () => {
  it('exist for the example recipes', () => {
    expect(recordings).toEqual(expect.arrayContaining(['ask.jsonl', 'country-facts.jsonl', 'swe.jsonl']));
  });

  it.each(recordings)('%s replays offline, with no model configured, and matches', async (name) => {
    const run = await runCli(['replay', join(repositoryRoot, 'recipes', 'recordings', name), '--json'], { cwd: makeFixture({}) });
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toContain('replay of recorded model replies');
    expect(run.stderr).toContain('replay matched the recording');
    expect(run.json.status).toBe('success');
  });
});
