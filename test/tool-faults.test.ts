import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorStreak } from '../runtime/kernel/error-streak.js';
import { limitOutput, OutputFile } from '../runtime/services/saved-output.js';
import { readEvents, runCli } from './support/run-cli.js';
import { startScriptedModelServer, type ScriptedTurn } from './support/scripted-model-server.js';
import { runScripted, terminate, toolMessages, writeLoopFixture, type LoopFixtureOptions } from './support/loop-fixture.js';

/** Tools that misbehave the way careless plugins do: errors thrown where no `await` can catch them. */
const strayTools = `import { EventEmitter } from 'node:events';
import { defineContextProvider, defineTool } from 'manus-runtime';

const pause = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));
let rendered = 0;

export default [
  defineTool({
    name: 'timer_throw',
    description: 'Throws from a timer while it waits.',
    parameters: { type: 'object', properties: {} },
    async execute() {
      setTimeout(() => { throw new Error('boom from a timer'); }, 10);
      await pause(1000);
      return 'never seen';
    },
  }),
  defineTool({
    name: 'emitter_error',
    description: 'Emits an error event nobody listens to.',
    parameters: { type: 'object', properties: {} },
    async execute() {
      const emitter = new EventEmitter();
      setTimeout(() => emitter.emit('error', new Error('unheard emitter error')), 10);
      await pause(1000);
      return 'never seen';
    },
  }),
  defineTool({
    name: 'rejection',
    description: 'Leaves a rejected promise unhandled.',
    parameters: { type: 'object', properties: {} },
    async execute() {
      void Promise.reject(new Error('nobody awaited this'));
      await pause(1000);
      return 'never seen';
    },
  }),
  defineTool({
    name: 'late_throw',
    description: 'Returns at once, then throws from a timer after it ended.',
    parameters: { type: 'object', properties: {} },
    execute() {
      setTimeout(() => { throw new Error('thrown after the call ended'); }, 20);
      return 'returned first';
    },
  }),
  defineTool<{ reason: string }>({
    name: 'fail_with',
    description: 'Fails with the reason it is given.',
    parameters: { type: 'object', properties: { reason: { type: 'string' } }, required: ['reason'] },
    execute({ reason }) {
      throw new Error(reason);
    },
  }),
  defineContextProvider({
    name: 'stray_provider',
    description: 'Throws from a timer while no tool call runs.',
    async render() {
      rendered += 1;
      if (rendered === 2) {
        setTimeout(() => { throw new Error('stray error outside any tool call'); }, 10);
        await pause(300);
      }
      return undefined;
    },
  }),
];
`;

function strayFixture(tools: string[], options: LoopFixtureOptions = {}): string {
  const fixture = writeLoopFixture({ ...options, tools: [...tools, 'terminate'] });
  writeFileSync(join(fixture, 'tools', 'stray.ts'), strayTools);
  return fixture;
}

describe('errors a tool throws where nothing awaits them', () => {
  it('become the error result of the call that caused them, with the stack trace only in the events file', async () => {
    const fixture = strayFixture(['timer_throw', 'emitter_error', 'rejection', 'late_throw', 'echo']);
    const run = await runScripted([
      { toolCalls: [{ name: 'timer_throw', arguments: {} }] },
      { toolCalls: [{ name: 'emitter_error', arguments: {} }] },
      { toolCalls: [{ name: 'rejection', arguments: {} }] },
      { toolCalls: [{ name: 'late_throw', arguments: {} }] },
      // The late error arrives while the model is thinking.
      { delayMs: 300, toolCalls: [{ name: 'echo', arguments: { text: 'still here' } }] },
      terminate('survived'),
    ], { fixture });
    expect(run.stderr).not.toContain('internal error');
    expect(run.exitCode).toBe(0);
    expect(run.json).toMatchObject({ status: 'success', answer: 'survived' });

    const results = run.requests.slice(1, 6).map((request) => toolMessages(request).at(-1)?.content);
    expect(results).toEqual([
      'Error: boom from a timer',
      'Error: unheard emitter error',
      'Error: nobody awaited this',
      'returned first',
      'echo: still here',
    ]);

    const events = readEvents(run.json.runDirectory);
    const toolErrors = events.filter((event) => event.type === 'tool-error');
    expect(toolErrors.map((event) => event.tool)).toEqual(['timer_throw', 'emitter_error', 'rejection']);
    for (const event of toolErrors) expect(event.stack).toMatch(/stray\.ts/);
    expect(events.find((event) => event.type === 'tool-error-uncaught')).toMatchObject({
      tool: 'late_throw',
      message: 'thrown after the call ended',
      stack: expect.stringContaining('stray.ts'),
    });
    expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'success' });
  });

  it('end the run as an internal error, recorded, when no tool call can own them', async () => {
    const fixture = strayFixture(['echo'], { agentExtra: 'context_providers: [stray_provider]' });
    const run = await runScripted([
      { toolCalls: [{ name: 'echo', arguments: { text: 'one' } }] },
      { toolCalls: [{ name: 'echo', arguments: { text: 'two' } }] },
      terminate('unreachable'),
    ], { fixture });
    expect(run.exitCode).toBe(1);
    expect(run.json).toMatchObject({ status: 'error', error: { code: 'internal_error' } });
    expect(run.json.answer).toContain('stray error outside any tool call');
    const events = readEvents(run.json.runDirectory);
    expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'error' });
  });
});

describe('calls after a call that finishes the run', () => {
  it('are skipped and recorded, while calls before it run', async () => {
    const run = await runScripted([
      {
        toolCalls: [
          { id: 'before', name: 'echo', arguments: { text: 'before' } },
          { id: 'finish', name: 'terminate', arguments: { status: 'success', message: 'finished' } },
          { id: 'after', name: 'echo', arguments: { text: 'after' } },
          { id: 'also-after', name: 'fail', arguments: {} },
        ],
      },
    ]);
    expect(run.exitCode).toBe(0);
    expect(run.json).toMatchObject({ status: 'success', answer: 'finished' });
    const events = readEvents(run.json.runDirectory);
    expect(events.filter((event) => event.type === 'tool-call-start').map((event) => event.callId)).toEqual(['before', 'finish']);
    expect(events.filter((event) => event.type === 'tool-call-skipped')).toMatchObject([
      { callId: 'after', tool: 'echo', after: 'finish' },
      { callId: 'also-after', tool: 'fail', after: 'finish' },
    ]);
    // Every call keeps a result in history, so a conversation continued from it stays valid.
    const results = events.filter((event) => event.type === 'message' && event.message.role === 'tool').map((event) => event.message);
    expect(results).toEqual([
      { role: 'tool', tool_call_id: 'before', content: 'echo: before' },
      { role: 'tool', tool_call_id: 'finish', content: 'The run finished with status success.' },
      { role: 'tool', tool_call_id: 'after', content: 'skipped: the run finished with an earlier call in this turn' },
      { role: 'tool', tool_call_id: 'also-after', content: 'skipped: the run finished with an earlier call in this turn' },
    ]);
  });
});

describe('a streak of failing calls', () => {
  it('different each time, gets a nudge after five and stops the run as stuck after ten', async () => {
    const fixture = strayFixture(['fail_with']);
    const turns = Array.from({ length: 12 }, (_, index) => ({ toolCalls: [{ name: 'fail_with', arguments: { reason: `attempt ${index} failed` } }] }));
    const run = await runScripted(turns, { fixture });
    expect(run.exitCode).toBe(1);
    expect(run.json).toMatchObject({ status: 'stuck', steps: 10 });
    expect(run.json.answer).toContain('The last 10 tool calls all failed');
    const events = readEvents(run.json.runDirectory);
    expect(events.filter((event) => event.type === 'error-streak-nudge')).toMatchObject([{ step: 5, failures: 5 }]);
    const nudge = (run.requests[5].body.messages as Array<{ role: string; content: string }>).at(-1);
    expect(nudge).toMatchObject({ role: 'user', content: expect.stringContaining('Your last 5 tool calls all failed') });
    expect(events.some((event) => event.type === 'stuck-nudge')).toBe(false);
  });

  it('follows the agent\'s error_streak, and a success ends the streak', () => {
    const streak = new ErrorStreak(2);
    expect(streak.observe([true])).toBe('ok');
    expect(streak.observe([false, true])).toBe('ok');
    expect(streak.observe([true])).toBe('nudge');
    expect(streak.observe([true])).toBe('ok');
    expect(streak.observe([true])).toBe('stuck');
    // One turn that jumps past both marks is warned first.
    expect(new ErrorStreak(2).observe([true, true, true, true])).toBe('nudge');
    expect(new ErrorStreak(0).observe(Array(20).fill(true))).toBe('ok');
  });
});

/** A small tmpfs of its own, so a full disk is real and harms nothing else; the reason when mounting is not permitted. */
function mountSmallDisk(): { folder: string; unmount(): void } | { reason: string } {
  const folder = mkdtempSync(join(tmpdir(), 'manus-full-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', folder], { stdio: 'pipe' });
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    return { reason: `cannot mount a tmpfs here (${String((error as { stderr?: Buffer }).stderr ?? error).trim()})` };
  }
  return {
    folder,
    unmount() {
      execFileSync('umount', [folder]);
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

async function runCliAgainst(turns: ScriptedTurn[], args: string[], cwd: string) {
  const server = await startScriptedModelServer({ turns });
  try {
    return await runCli(args, { cwd, env: { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model' } });
  } finally {
    await server.close();
  }
}

describe('a full disk under the runs folder', () => {
  it('stops the run with one clear line, exit 1, and an events file that resume can read', async (context) => {
    const disk = mountSmallDisk();
    if ('reason' in disk) {
      console.warn(`skipped: ${disk.reason}`);
      context.skip(disk.reason);
      return;
    }
    try {
      const fixture = writeLoopFixture();
      const runsDirectory = join(disk.folder, 'runs');
      // Leave room for the run's start and not for a model reply carrying a 40 kB argument.
      const free = Number(statfsSync(disk.folder).bavail * statfsSync(disk.folder).bsize);
      const filler = join(disk.folder, 'filler');
      writeFileSync(filler, Buffer.alloc(free - 16 * 1024));
      const run = await runCliAgainst(
        [{ toolCalls: [{ name: 'echo', arguments: { text: 'x'.repeat(40_000) } }] }, terminate('unreachable')],
        ['run', 'recipe.yaml', '--runs-dir', runsDirectory],
        fixture,
      );
      const [runId] = readdirSync(runsDirectory);
      const eventsFile = join(runsDirectory, runId, 'events.jsonl');
      expect(run.exitCode).toBe(1);
      const problems = run.stderr.split('\n').filter((line) => line.startsWith('manus:'));
      expect(problems).toEqual([`manus: run ${runId} ended: error: cannot write the run's events to ${eventsFile}: no space left on device`]);
      expect(run.stderr).not.toMatch(/^\s+at /m);
      expect(run.stderr).not.toContain('internal error');

      // Every line is a whole event: the half-written one was cut off.
      const text = readFileSync(eventsFile, 'utf8');
      expect(text.endsWith('\n')).toBe(true);
      const types = text.trim().split('\n').map((line) => JSON.parse(line).type);
      expect(types[0]).toBe('run-start');
      expect(types).not.toContain('model-response');

      rmSync(filler);
      const shown = await runCli(['runs', 'show', runId, '--runs-dir', runsDirectory], { cwd: fixture });
      expect(shown.exitCode).toBe(0);
      const resumed = await runCliAgainst([terminate('finished after all')], ['resume', runId, '--runs-dir', runsDirectory, '--json'], fixture);
      expect(resumed.stderr).not.toContain('warning');
      expect(resumed.exitCode).toBe(0);
      expect(resumed.json).toMatchObject({ runId, status: 'success', answer: 'finished after all' });
    } finally {
      disk.unmount();
    }
  });
});

describe('long output', () => {
  const fiftyMegabytes = 'head -c 50000000 /dev/zero | tr "\\0" "a"; echo; echo LAST LINE';

  it('is saved whole, and the model is told where even when max_observe shortens it again', async () => {
    const run = await runScripted([
      { toolCalls: [{ name: 'bash', arguments: { command: fiftyMegabytes } }] },
      terminate(),
    ], { tools: ['bash', 'terminate'], agentExtra: 'max_observe: 2000' });
    expect(run.exitCode).toBe(0);
    const [message] = toolMessages(run.requests[1]);
    expect(message.content.length).toBeLessThanOrEqual(2000);
    const path = /saved to (\S+\.txt)/.exec(message.content)?.[1];
    expect(path, message.content).toBeDefined();
    expect(path!.startsWith(join(run.json.runDirectory, 'outputs'))).toBe(true);
    expect(statSync(path!).size).toBe(50_000_000 + '\nLAST LINE\n'.length);
    expect(message.content).toContain('LAST LINE');
  });

  it('is saved up to tool_settings.<tool>.saved_output_limit_mb, and the notice says so', async () => {
    const run = await runScripted([
      { toolCalls: [{ name: 'bash', arguments: { command: 'head -c 3000000 /dev/zero | tr "\\0" "b"' } }] },
      terminate(),
    ], { tools: ['bash', 'terminate'], agentExtra: 'tool_settings: { bash: { saved_output_limit_mb: 1 } }' });
    expect(run.exitCode).toBe(0);
    const [message] = toolMessages(run.requests[1]);
    const notice = /the first 1 MB of 3 MB saved to (\S+\.txt), the limit set by tool_settings\.bash\.saved_output_limit_mb/.exec(message.content);
    expect(notice, message.content).not.toBeNull();
    expect(statSync(notice![1]).size).toBe(1_000_000);
  });

  it('leaves no saved file behind when it fits', async () => {
    const run = await runScripted([{ toolCalls: [{ name: 'bash', arguments: { command: 'echo short' } }] }, terminate()], { tools: ['bash', 'terminate'] });
    expect(toolMessages(run.requests[1])[0].content).toBe('short\n[Exit status 0]');
    expect(() => readdirSync(join(run.json.runDirectory, 'outputs'))).toThrow();
  });
});

describe('a saved output on a full disk', () => {
  it('keeps what fit, never throws from the stream, and tells the model what happened', async (context) => {
    const disk = mountSmallDisk();
    if ('reason' in disk) {
      console.warn(`skipped: ${disk.reason}`);
      context.skip(disk.reason);
      return;
    }
    try {
      const file = new OutputFile({ runDirectory: disk.folder, label: 'bash', limitBytes: 10_000_000 });
      const chunk = Buffer.alloc(64 * 1024, 'c');
      for (let index = 0; index < 10; index += 1) expect(() => file.write(chunk)).not.toThrow();
      const output = Buffer.concat(Array.from({ length: 10 }, () => chunk));
      const limited = await limitOutput(output, { limit: 1000, runDirectory: disk.folder, label: 'bash', file });
      expect(limited.notice).toMatch(/^the full output could not be saved \(ENOSPC[^)]*\); \S+ holds its first \d+ bytes$/);
      expect(limited.text).toContain(limited.notice);
      expect(statSync(limited.savedPath!).size).toBeLessThan(output.length);
    } finally {
      disk.unmount();
    }
  });
});

describe('files a call reports', () => {
  it('are only the ones it wrote, when calls in one turn write files at the same time', async () => {
    const writer = (name: string) => ({
      name: 'python_execute',
      arguments: { code: `import time\nopen('${name}', 'w').write('${name}')\ntime.sleep(0.2)\nprint('wrote ${name}')` },
    });
    const run = await runScripted([
      { toolCalls: [writer('first.txt'), writer('second.txt'), { name: 'bash', arguments: { command: 'echo third > third.txt' } }] },
      terminate(),
    ], { tools: ['python_execute', 'bash', 'terminate'] });
    expect(run.exitCode).toBe(0);
    const [first, second] = toolMessages(run.requests[1]);
    expect(first.content).toMatch(/^Files created: first\.txt$/m);
    expect(first.content).not.toMatch(/second\.txt|third\.txt/);
    expect(second.content).toMatch(/^Files created: second\.txt$/m);
    expect(second.content).not.toMatch(/first\.txt|third\.txt/);
    expect(run.json.files).toEqual(['first.txt', 'second.txt', 'third.txt']);
  });
});
