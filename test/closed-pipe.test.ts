import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEntry, makeFixture, readEvents } from './support/run-cli.js';
import { startScriptedModelServer } from './support/scripted-model-server.js';

/** A tool that holds the run until a file appears, so the pipe is closed before the run goes on. */
const gateTool = `import { existsSync } from 'node:fs';
import { defineTool } from 'manus-runtime';
export default defineTool<{ path: string }>({
  name: 'wait_for_file',
  description: 'Waits until a file exists.',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  async execute({ path }) {
    while (!existsSync(path)) await new Promise((resolve) => setTimeout(resolve, 10));
    return 'the file is there';
  },
});
`;

const recipe = 'version: 1\nname: piped\nprompt: Wait, then answer.\nplugins: [./tools]\nagent:\n  system_prompt: You are a test agent.\n  tools: [wait_for_file, terminate]\n';

describe('a closed output pipe', () => {
  it('stops the printing, not the run: `manus run ... 2>&1 | head -c 10` still ends with its own code, events and reports', async () => {
    const fixture = makeFixture({ 'recipe.yaml': recipe, 'tools/gate.ts': gateTool, 'agents.yaml': 'version: 1\nllm:\n  default:\n    retry: { base_delay_ms: 5 }\n' });
    const gate = join(fixture, 'go');
    const server = await startScriptedModelServer({
      turns: [
        { content: 'I will wait.', toolCalls: [{ name: 'wait_for_file', arguments: { path: gate } }] },
        { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'an answer long enough to need the closed pipe' } }] },
      ],
    });
    try {
      const reader = spawn('head', ['-c', '10'], { stdio: ['pipe', 'ignore', 'ignore'] });
      const readerClosed = new Promise((resolve) => reader.on('close', resolve));
      const cli = spawn(process.execPath, [cliEntry, 'run', 'recipe.yaml', '--runs-dir', 'runs', '--report', 'report', '--ci'], {
        cwd: fixture,
        env: { PATH: process.env.PATH, HOME: fixture, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model', NO_COLOR: '1' },
        stdio: ['ignore', reader.stdin, reader.stdin],
      });
      // Only the two processes hold the pipe now: once the reader is gone, every write fails.
      reader.stdin.destroy();
      const exitCode = new Promise<number | null>((resolve) => cli.on('close', resolve));
      await readerClosed;
      writeFileSync(gate, '');
      expect(await exitCode).toBe(0);

      const [runId] = readdirSync(join(fixture, 'runs'));
      const events = readEvents(join(fixture, 'runs', runId));
      expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'success', exitCode: 0 });
      expect(existsSync(join(fixture, 'report', 'manus-junit.xml'))).toBe(true);
      const report = JSON.parse(readFileSync(join(fixture, 'report', 'manus-report.json'), 'utf8'));
      expect(report).toMatchObject({ runId, status: 'success', exitCode: 0, answer: 'an answer long enough to need the closed pipe' });
    } finally {
      await server.close();
    }
  });
});
