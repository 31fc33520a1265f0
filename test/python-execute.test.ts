import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import pythonExecute from '../plugins/code/python_execute.js';
import { pythonInterpreter } from '../plugins/code/python-interpreter.js';
import type { ToolContext, ToolResult } from '../runtime/contract/tool.js';
import { useToolContexts } from './support/tool-context.js';
import { processesWithArgument } from './support/processes.js';

const createContext = useToolContexts();
const newContext = (settings: Record<string, unknown> = {}) => createContext({ settings });

async function runPython(context: ToolContext, code: string, timeout?: number): Promise<ToolResult> {
  const result = await pythonExecute.execute({ code, timeout }, context);
  if (typeof result === 'string') throw new Error('python_execute returns a ToolResult');
  return result;
}

describe('python_execute in fresh mode', () => {
  it('returns printed output and a zero exit status', async () => {
    const { context } = newContext();
    const result = await runPython(context, 'import sys\nprint("hello", 6 * 7)\nprint("careful", file=sys.stderr)');
    expect(result.isError).toBe(false);
    expect(result.content).toContain('hello 42');
    expect(result.content).toContain('[stderr]\ncareful');
    expect(result.content).toContain('[Exit status 0]');
  });

  it('runs with the workspace as working folder', async () => {
    const { context } = newContext();
    const result = await runPython(context, 'import os\nprint(os.getcwd())');
    expect(result.content.split('\n')[0]).toBe(context.workspace);
  });

  it('starts a new interpreter for every call', async () => {
    const { context } = newContext();
    await runPython(context, 'remembered = 1');
    const result = await runPython(context, 'print(remembered)');
    expect(result.isError).toBe(true);
    expect(result.content).toContain("NameError: name 'remembered' is not defined");
  });

  it('returns the traceback with source lines as an error', async () => {
    const { context } = newContext();
    const result = await runPython(context, 'def divide(a, b):\n    return a / b\n\nprint(divide(1, 0))');
    expect(result.isError).toBe(true);
    expect(result.content).toContain('File "<code>", line 2, in divide');
    expect(result.content).toContain('return a / b');
    expect(result.content).toContain('ZeroDivisionError: division by zero');
    expect(result.content).toContain('[Exit status 1]');
    expect(result.content).not.toContain('_manus_driver');
  });

  it('reports a non-zero sys.exit as an error with its status', async () => {
    const { context } = newContext();
    const result = await runPython(context, 'import sys\nprint("before")\nsys.exit(3)');
    expect(result.isError).toBe(true);
    expect(result.content).toContain('before');
    expect(result.content).toContain('[Exit status 3]');
  });

  it('reports files the code created or modified and lists them in files', async () => {
    const { context } = newContext();
    writeFileSync(join(context.workspace, 'existing.txt'), 'old\n');
    writeFileSync(join(context.workspace, 'untouched.txt'), 'same\n');
    writeFileSync(join(context.workspace, 'doomed.txt'), 'bye\n');
    const code = [
      'import os',
      'os.makedirs("charts", exist_ok=True)',
      'open("charts/plot.png", "wb").write(b"png")',
      'open("data.csv", "w").write("a,b\\n1,2\\n")',
      'open("existing.txt", "a").write("new\\n")',
      'os.remove("doomed.txt")',
    ].join('\n');
    const result = await runPython(context, code);
    expect(result.isError).toBe(false);
    expect(result.content).toContain('Files created: charts/plot.png, data.csv');
    expect(result.content).toContain('Files modified: existing.txt');
    expect(result.content).toContain('Files deleted: doomed.txt');
    expect(result.files).toEqual(['charts/plot.png', 'data.csv', 'existing.txt']);
    expect(readFileSync(join(context.workspace, 'data.csv'), 'utf8')).toBe('a,b\n1,2\n');
  });

  it('passes code containing any characters through unchanged', async () => {
    const { context } = newContext();
    const result = await runPython(context, 'print("quotes \' \\" and unicode \u00e9\u4e2d\ud83d\ude00")');
    expect(result.content).toContain('quotes \' " and unicode \u00e9\u4e2d\ud83d\ude00');
  });

  it('gives the code no input, so input() fails instead of hanging', async () => {
    const { context } = newContext();
    const result = await runPython(context, 'input("name? ")', 10);
    expect(result.isError).toBe(true);
    expect(result.content).toContain('EOFError');
  });

  it('on timeout kills the code, its child and a background grandchild, keeping the partial output', async () => {
    const { context } = newContext();
    // Process ids inside a sandbox need not be the host's, so the processes are found by their arguments.
    const marker = `300.${process.pid}${Date.now() % 100000}`;
    const childScript = `sleep ${marker} & echo $! > grandchild.pid; wait`;
    const code = [
      'import subprocess, time',
      `child = subprocess.Popen("${childScript}", shell=True)`,
      'open("child.pid", "w").write(str(child.pid))',
      'print("started", flush=True)',
      'time.sleep(300)',
    ].join('\n');
    const started = Date.now();
    const result = await runPython(context, code, 1.5);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.isError).toBe(true);
    expect(result.content).toContain('started');
    expect(result.content).toContain('[Timed out after 1.5 s');
    expect(Number(readFileSync(join(context.workspace, 'child.pid'), 'utf8'))).toBeGreaterThan(0);
    expect(Number(readFileSync(join(context.workspace, 'grandchild.pid'), 'utf8'))).toBeGreaterThan(0);
    await expect.poll(() => [...processesWithArgument(childScript), ...processesWithArgument(marker)], { timeout: 3000 }).toEqual([]);
  });

  it('keeps the model-facing output within max_output and saves the full output', async () => {
    const { context } = newContext({ max_output: 2000 });
    const result = await runPython(context, 'for number in range(20000):\n    print("line", number)');
    expect(result.isError).toBe(false);
    expect(result.content.length).toBeLessThan(2400);
    expect(result.content).toContain('line 0');
    expect(result.content).toContain('line 19999');
    const savedPath = /full output saved to (\S+?) \.\.\.\]/.exec(result.content)?.[1];
    expect(savedPath).toBeDefined();
    expect(readFileSync(savedPath as string, 'utf8')).toContain('line 12345\n');
  });
});

describe('python_execute in persistent mode', () => {
  it('keeps variables and imports between calls and echoes a final expression', async () => {
    const { context } = newContext({ mode: 'persistent' });
    const first = await runPython(context, 'import math\ncounter = 41');
    expect(first.isError).toBe(false);
    expect(first.content).toBe('(no output)\n[Exit status 0]');
    const second = await runPython(context, 'counter += 1\nprint("counter is", counter)\nmath.sqrt(counter * counter)');
    expect(second.content).toContain('counter is 42\n42.0');
  });

  it('stays alive after an exception, with the state kept', async () => {
    const { context } = newContext({ mode: 'persistent' });
    await runPython(context, 'kept = "yes"');
    const failing = await runPython(context, 'raise ValueError("bad value")');
    expect(failing.isError).toBe(true);
    expect(failing.content).toContain('File "<cell 2>", line 1');
    expect(failing.content).toContain('ValueError: bad value');
    const after = await runPython(context, 'print(kept)');
    expect(after.isError).toBe(false);
    expect(after.content).toContain('yes');
  });

  it('on timeout kills the interpreter, says the state is lost, and starts fresh next time', async () => {
    const { context } = newContext({ mode: 'persistent' });
    await runPython(context, 'kept = 1');
    const stuck = await runPython(context, 'print("looping", flush=True)\nwhile True:\n    pass', 1);
    expect(stuck.isError).toBe(true);
    expect(stuck.content).toContain('looping');
    expect(stuck.content).toContain('[Timed out after 1 s');
    expect(stuck.content).toContain('state from earlier calls are lost');
    const next = await runPython(context, 'print(kept)');
    expect(next.content).toContain("NameError: name 'kept' is not defined");
    const recovered = await runPython(context, 'print("alive")');
    expect(recovered.isError).toBe(false);
  });

  it('reports an interpreter that exits by itself and replaces it', async () => {
    const { context } = newContext({ mode: 'persistent' });
    const ended = await runPython(context, 'import os\nprint("bye", flush=True)\nos._exit(7)');
    expect(ended.isError).toBe(true);
    expect(ended.content).toContain('bye');
    expect(ended.content).toContain('The interpreter exited with status 7');
    const next = await runPython(context, 'print("fresh")');
    expect(next.isError).toBe(false);
    expect(next.content).toContain('fresh');
  });

  it('reports files created by a cell', async () => {
    const { context } = newContext({ mode: 'persistent' });
    mkdirSync(join(context.workspace, 'out'));
    const result = await runPython(context, 'open("out/result.json", "w").write("{}")');
    expect(result.files).toEqual(['out/result.json']);
    expect(existsSync(join(context.workspace, 'out', 'result.json'))).toBe(true);
  });
});

describe('python_execute settings', () => {
  it('rejects an unknown mode', async () => {
    const { context } = newContext({ mode: 'sometimes' });
    await expect(runPython(context, 'print(1)')).rejects.toThrow('mode must be "fresh" or "persistent"');
  });
});

describe('which Python python_execute runs', () => {
  it('is the setting, else MANUS_PYTHON outside a container, else python3', () => {
    const environment = { MANUS_PYTHON: '/usr/bin/python3' };
    expect(pythonInterpreter('/opt/python/bin/python3', environment, 'bwrap')).toBe('/opt/python/bin/python3');
    expect(pythonInterpreter(undefined, environment, 'bwrap')).toBe('/usr/bin/python3');
    expect(pythonInterpreter(undefined, environment, 'host')).toBe('/usr/bin/python3');
    expect(pythonInterpreter(undefined, environment)).toBe('/usr/bin/python3');
    expect(pythonInterpreter(undefined, environment, 'docker')).toBe('python3');
    expect(pythonInterpreter(undefined, { MANUS_PYTHON: '' }, 'bwrap')).toBe('python3');
    expect(pythonInterpreter(undefined, {}, 'host')).toBe('python3');
  });

  it.skipIf(!existsSync('/usr/bin/python3'))('runs the interpreter MANUS_PYTHON names when no setting names one', async () => {
    const previous = process.env.MANUS_PYTHON;
    process.env.MANUS_PYTHON = '/usr/bin/python3';
    try {
      const { context } = newContext();
      const result = await runPython(context, 'import sys\nprint(sys.executable)');
      expect(result.content.split('\n')[0]).toBe('/usr/bin/python3');
    } finally {
      if (previous === undefined) delete process.env.MANUS_PYTHON;
      else process.env.MANUS_PYTHON = previous;
    }
  });
});
