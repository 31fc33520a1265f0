import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { probeBwrap } from '../runtime/services/sandbox/create-sandbox.js';
import { makeFixture, readEvents, runCli } from './support/run-cli.js';
import { scriptedModelName, startScriptedModelServer, type RecordedChatRequest, type ScriptedModelServer } from './support/scripted-model-server.js';

// A plugin folder someone else wrote, outside the package, importing nothing but the public API and
// its own module: what the built-in families need, it can have.
const journalModule = `import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';

/** A per-run journal; closing it is the run's clean-up. */
export class Journal {
  entries = 0;
  private readonly stream: WriteStream;

  constructor(folder: string) {
    this.stream = createWriteStream(join(folder, 'journal.txt'));
  }

  write(line: string): void {
    this.entries += 1;
    this.stream.write(line + '\\n');
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.stream.end('closed\\n', () => resolve()));
  }
}
`;

const strangerIndex = `import { defineTool, ToolError } from 'manus-runtime';
import { Journal } from './journal.js';

export default [
  defineTool({
    name: 'stranger_report',
    description: 'Runs a command in the sandbox, asks the model for a title and keeps a journal for the run.',
    parameters: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
    async execute({ topic }, context) {
      const sandbox = await context.sandbox();
      const command = await sandbox.run(['sh', '-c', 'echo "$0 in $(pwd)" > note.txt && cat note.txt', sandbox.kind], { timeoutMs: 10_000, signal: context.signal });
      if (command.exitCode !== 0) throw new ToolError('the command failed: ' + command.stderr.toString());
      const title = await context.model.complete([{ role: 'user', content: 'A title for ' + topic }], { signal: context.signal });
      const journal = await context.resources.get('stranger.journal', () => new Journal(context.runDirectory), (opened) => opened.close());
      journal.write(topic + ': ' + title);
      return command.stdout.toString().trim() + ' | ' + title + ' | entries: ' + journal.entries;
    },
  }),
];
`;

const recipe = 'version: 1\nname: stranger\nprompt: Report twice.\nplugins: [their-plugins]\nagent:\n  tools: [stranger_report, terminate]\n';

const bwrap = await probeBwrap();
if (!bwrap.usable) console.warn(`the stranger's plugin test is skipped: bubblewrap is not usable here (${bwrap.reason})`);

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe.skipIf(!bwrap.usable)("a stranger's plugin folder, using only the public API", () => {
  it('runs a command in the sandbox, asks the model and keeps a per-run resource that is cleaned up', async () => {
    const fixture = makeFixture({
      'their-plugins/stranger/index.ts': strangerIndex,
      'their-plugins/stranger/journal.ts': journalModule,
      'recipe.yaml': recipe,
    });
    server = await startScriptedModelServer({
      turns: [
        { toolCalls: [{ id: 'call_1', name: 'stranger_report', arguments: { topic: 'tides' } }] },
        { content: 'On Tides' },
        { toolCalls: [{ id: 'call_2', name: 'stranger_report', arguments: { topic: 'winds' } }] },
        { content: 'Of Winds' },
        { toolCalls: [{ id: 'call_end', name: 'terminate', arguments: { status: 'success', message: 'Reported.' } }] },
      ],
    });
    const result = await runCli(['run', 'recipe.yaml', '--sandbox', 'bwrap', '--json', '--quiet'], {
      cwd: fixture,
      env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: scriptedModelName },
    });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    const { runDirectory, workspace } = result.json as { runDirectory: string; workspace: string };

    const toolEnds = readEvents(runDirectory).filter((event) => event.type === 'tool-call-end');
    const workspaceInSandbox = readFileSync(join(workspace, 'note.txt'), 'utf8').trim().split(' in ')[1];
    expect(toolEnds.map((event) => event.content)).toEqual([
      `bwrap in ${workspaceInSandbox} | On Tides | entries: 1`,
      `bwrap in ${workspaceInSandbox} | Of Winds | entries: 2`,
      'The run finished with status success.',
    ]);
    // The tool's own request to the model carried no tools; the loop's requests did.
    const chats = server.requests.filter((request) => request.path === '/v1/chat/completions') as RecordedChatRequest[];
    expect(chats.map((request) => request.body.tools === undefined)).toEqual([false, true, false, true, false]);
    // The resource lived across both calls and was disposed when the run ended.
    expect(readFileSync(join(runDirectory, 'journal.txt'), 'utf8')).toBe('tides: On Tides\nwinds: Of Winds\nclosed\n');
    expect(existsSync(join(fixture, 'their-plugins', 'stranger', 'journal.txt'))).toBe(false);
  });
});
