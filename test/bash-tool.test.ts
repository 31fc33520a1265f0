import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import bash from '../plugins/code/bash.js';
import type { ToolContext, ToolResult } from '../runtime/contract/tool.js';
import { useToolContexts } from './support/tool-context.js';
import { processesWithArgument } from './support/processes.js';

const createContext = useToolContexts();
const newContext = (settings: Record<string, unknown> = {}) => createContext({ settings });

async function runBash(context: ToolContext, command: string, options: { timeout?: number; restart?: boolean } = {}): Promise<ToolResult> {
  const result = await bash.execute({ command, ...options }, context);
  return typeof result === 'string' ? { content: result } : result;
}

describe('bash session state', () => {
  it('keeps the working folder and exported variables between calls', async () => {
    const { context } = newContext();
    mkdirSync(join(context.workspace, 'project'));
    const first = await runBash(context, 'cd project && export GREETING=hello && LOCAL_ONLY=kept');
    expect(first.isError).toBe(false);
    expect(first.content).toBe('(no output)\n[Exit status 0]');
    const second = await runBash(context, 'pwd; echo "$GREETING $LOCAL_ONLY"');
    expect(second.content).toBe(`${join(context.workspace, 'project')}\nhello kept\n[Exit status 0]`);
  });

  it('starts in the workspace', async () => {
    const { context } = newContext();
    const result = await runBash(context, 'pwd');
    expect(result.content.split('\n')[0]).toBe(context.workspace);
  });

  it('reports a non-zero exit status without treating it as an error', async () => {
    const { context } = newContext();
    const result = await runBash(context, 'echo checking; test -e missing-file');
    expect(result.isError).toBe(false);
    expect(result.content).toBe('checking\n[Exit status 1]');
  });

  it('merges standard error into the output in order', async () => {
    const { context } = newContext();
    const result = await runBash(context, 'echo one; echo two >&2; echo three');
    expect(result.content).toBe('one\ntwo\nthree\n[Exit status 0]');
  });

  it('runs multi-line commands with here-documents and quotes of every kind', async () => {
    const { context } = newContext();
    const command = ["cat <<'EOF' > note.txt", "it's a \"test\" with $dollar and `ticks`", 'EOF', 'cat note.txt'].join('\n');
    const result = await runBash(context, command);
    expect(result.content).toBe('it\'s a "test" with $dollar and `ticks`\n[Exit status 0]');
  });

  it('survives a command with a syntax error', async () => {
    const { context } = newContext();
    const broken = await runBash(context, 'echo "unterminated', { timeout: 10 });
    expect(broken.content).toContain('unexpected EOF');
    expect(broken.content).toContain('[Exit status 2]');
    const after = await runBash(context, 'echo still here');
    expect(after.content).toBe('still here\n[Exit status 0]');
  });

  it('gives commands no input, so a command that reads input does not hang', async () => {
    const { context } = newContext();
    const result = await runBash(context, 'cat; read -r line; echo "read status $?"', { timeout: 10 });
    expect(result.content).toBe('read status 1\n[Exit status 0]');
  });

  it('reports a shell that exits and starts a fresh one for the next call', async () => {
    const { context } = newContext();
    await runBash(context, 'export MARK=old');
    const exited = await runBash(context, 'echo leaving; exit 5');
    expect(exited.content).toContain('leaving');
    expect(exited.content).toContain('[The shell exited with status 5;');
    const next = await runBash(context, 'echo "mark=[$MARK]"');
    expect(next.content).toBe('mark=[]\n[Exit status 0]');
  });
});

describe('bash restart', () => {
  it('gives a fresh shell when restart is true', async () => {
    const { context } = newContext();
    mkdirSync(join(context.workspace, 'elsewhere'));
    await runBash(context, 'cd elsewhere; export MARK=old');
    const restarted = await runBash(context, 'pwd; echo "mark=[$MARK]"', { restart: true });
    expect(restarted.content).toBe(`${context.workspace}\nmark=[]\n[Exit status 0]`);
  });

  it('accepts an empty command with restart', async () => {
    const { context } = newContext();
    const result = await runBash(context, '', { restart: true });
    expect(result.content).toBe('Started a fresh shell.');
  });

  it('rejects an empty command without restart', async () => {
    const { context } = newContext();
    await expect(runBash(context, '   ')).rejects.toThrow('The command is empty.');
  });
});

describe('bash timeouts', () => {
  it('kills the shell and its background job, returns partial output, and starts fresh next time', async () => {
    const { context } = newContext();
    await runBash(context, 'export MARK=old');
    const started = Date.now();
    const marker = `300.${process.pid}${Date.now() % 100000}`;
    const result = await runBash(context, `sleep ${marker} & echo started; sleep 300`, { timeout: 1 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.isError).toBe(true);
    expect(result.content).toContain('started');
    expect(result.content).toContain('[Timed out after 1 s: the shell and every process it started were killed;');
    await expect.poll(() => processesWithArgument(marker), { timeout: 3000 }).toEqual([]);
    const next = await runBash(context, 'echo "mark=[$MARK]"');
    expect(next.content).toBe('mark=[]\n[Exit status 0]');
  });

  it('keeps background jobs that finish in time, and reports their later output with the next call', async () => {
    const { context } = newContext();
    const first = await runBash(context, '(sleep 0.3; echo from-background) & echo launched');
    expect(first.content).toBe('launched\n[Exit status 0]');
    await new Promise((resolve) => setTimeout(resolve, 800));
    const second = await runBash(context, 'echo now');
    expect(second.content).toBe('from-background\nnow\n[Exit status 0]');
  });
});

describe('bash output limits', () => {
  it('keeps the head and tail within max_output and saves the full output', async () => {
    const { context } = newContext({ max_output: 1500 });
    const result = await runBash(context, 'seq 1 100000');
    expect(result.content.length).toBeLessThan(1700);
    expect(result.content.startsWith('1\n2\n3\n')).toBe(true);
    expect(result.content).toContain('99999\n100000\n[Exit status 0]');
    const savedPath = /full output saved to (\S+?) \.\.\.\]/.exec(result.content)?.[1];
    expect(readFileSync(savedPath as string, 'utf8')).toContain('\n54321\n');
  });
});
