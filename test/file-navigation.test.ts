import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolError } from '../runtime/contract/errors.js';
import type { ToolContext } from '../runtime/contract/tool.js';
import fileSearch from '../plugins/files/file_search.js';
import listFiles from '../plugins/files/list_files.js';
import { createTestToolContext } from './support/tool-context.js';

let harness: ReturnType<typeof createTestToolContext>;
let context: ToolContext;
let workspace: string;

const appSource = 'import { helper } from "./lib/helper.js";\nexport const answer = helper(41);\n';
const helperSource = 'export function helper(value: number) {\n  return value + 1; // TODO check overflow\n}\n';
const guideText = '# Guide\nCall helper() to add one.\n';

function write(path: string, content: string | Buffer): void {
  const absolute = join(workspace, path);
  mkdirSync(join(absolute, '..'), { recursive: true });
  writeFileSync(absolute, content);
}

beforeEach(() => {
  harness = createTestToolContext();
  context = harness.context;
  workspace = context.workspace;
  write('src/app.ts', appSource);
  write('src/lib/helper.ts', helperSource);
  write('docs/guide.md', guideText);
  write('node_modules/dependency/index.js', 'function helper() {}\n');
  write('.git/config', '[core]\n\thelper = store\n');
  write('assets/logo.bin', Buffer.concat([Buffer.from('helper'), Buffer.from([0, 1, 2])]));
});

afterEach(async () => {
  await harness.dispose();
  rmSync(harness.root, { recursive: true, force: true });
});

async function search(input: Parameters<typeof fileSearch.execute>[0], callContext = context): Promise<string> {
  return (await fileSearch.execute(input, callContext)) as string;
}

async function list(input: Parameters<typeof listFiles.execute>[0]): Promise<string> {
  return (await listFiles.execute(input, context)) as string;
}

async function rejection(action: () => unknown): Promise<ToolError> {
  try {
    await action();
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return error as ToolError;
  }
  throw new Error('expected the call to fail');
}

describe('file_search', () => {
  it('finds matches as path:line: text, skipping .git, node_modules and binary files', async () => {
    const output = await search({ pattern: 'helper\\(' });
    expect(output.split('\n')).toEqual([
      '3 matches in 3 files:',
      'docs/guide.md:2: Call helper() to add one.',
      'src/app.ts:2: export const answer = helper(41);',
      'src/lib/helper.ts:1: export function helper(value: number) {',
    ]);
  });

  it('is case-insensitive unless asked otherwise', async () => {
    expect(await search({ pattern: 'todo' })).toContain('src/lib/helper.ts:2:   return value + 1; // TODO check overflow');
    expect(await search({ pattern: 'todo', case_sensitive: true })).toMatch(/^No matches for \/todo\//);
  });

  it('narrows by path and by glob', async () => {
    expect(await search({ pattern: 'helper', path: 'docs' })).toBe('1 match in 1 file:\ndocs/guide.md:2: Call helper() to add one.');
    const typescriptOnly = await search({ pattern: 'helper', glob: '*.ts' });
    expect(typescriptOnly).toContain('src/app.ts:1:');
    expect(typescriptOnly).not.toContain('docs/guide.md');
    const underLib = await search({ pattern: 'helper', glob: 'src/**/*.{ts,js}' });
    expect(underLib).toContain('src/lib/helper.ts:1:');
    expect(underLib).toContain('src/app.ts:1:');
    expect(await search({ pattern: 'helper', glob: 'lib/*.ts', path: 'src' })).toBe(
      '1 match in 1 file:\nsrc/lib/helper.ts:1: export function helper(value: number) {',
    );
    expect(await search({ pattern: 'answer', path: 'src/app.ts' })).toContain('src/app.ts:2:');
  });

  it('stops at max_results and says more exist', async () => {
    write('many.txt', Array.from({ length: 50 }, (_, index) => `hit ${index}`).join('\n'));
    const output = await search({ pattern: '^hit', max_results: 5 });
    expect(output.split('\n').filter((line) => line.startsWith('many.txt:'))).toHaveLength(5);
    expect(output).toContain('Stopped at max_results (5)');
  });

  it('bounds output by characters and shortens very long lines around the match', async () => {
    write('minified.js', `${'x'.repeat(5000)}NEEDLE${'y'.repeat(5000)}\n`);
    const line = (await search({ pattern: 'NEEDLE' })).split('\n')[1];
    expect(line.length).toBeLessThan(300);
    expect(line).toContain('...xxx');
    expect(line).toContain('NEEDLEyyy');
    write('wide.txt', Array.from({ length: 500 }, () => 'match '.repeat(30)).join('\n'));
    const bounded = await search({ pattern: 'match', max_results: 1000 }, { ...context, settings: { max_output: 2000 } });
    expect(bounded.length).toBeLessThan(2200);
    expect(bounded).toContain('Stopped at 2000 characters');
  });

  it('reports an invalid regular expression, naming the problem', async () => {
    const error = await rejection(() => fileSearch.execute({ pattern: 'helper(' }, context));
    expect(error.code).toBe('invalid_pattern');
    expect(error.message).toContain('Unterminated group');
  });

  it('stays inside the workspace and does not follow links', async () => {
    write('../outside/secret.txt', 'helper secret\n');
    symlinkSync(join(harness.root, 'outside'), join(workspace, 'exit'));
    expect(await search({ pattern: 'secret' })).toMatch(/^No matches/);
    const error = await rejection(() => fileSearch.execute({ pattern: 'secret', path: '../outside' }, context));
    expect(error.code).toBe('path_outside_workspace');
  });
});

describe('list_files', () => {
  it('shows a tree two levels deep with sizes, folders marked, large folders not opened', async () => {
    expect(await list({})).toBe(
      [
        './',
        '  .git/ (not opened)',
        '  assets/',
        '    logo.bin (9 B)',
        '  docs/',
        `    guide.md (${guideText.length} B)`,
        '  node_modules/ (not opened)',
        '  src/',
        '    lib/ (1 entry)',
        `    app.ts (${appSource.length} B)`,
      ].join('\n'),
    );
  });

  it('lists a subfolder to the depth asked and shows links without following them', async () => {
    write('src/lib/big.dat', Buffer.alloc(3 * 1024 * 1024));
    symlinkSync(join(harness.root, 'run'), join(workspace, 'src', 'exit'));
    expect(await list({ path: 'src', depth: 3 })).toBe(
      [
        'src/',
        '  lib/',
        '    big.dat (3.0 MB)',
        `    helper.ts (${helperSource.length} B)`,
        `  app.ts (${appSource.length} B)`,
        `  exit -> ${join(harness.root, 'run')}`,
      ].join('\n'),
    );
  });

  it('bounds a large listing and says how to see the rest', async () => {
    for (let index = 0; index < 400; index += 1) write(`many/file-${String(index).padStart(3, '0')}.txt`, 'x');
    const output = (await listFiles.execute({ path: 'many' }, { ...context, settings: { max_output: 1000 } })) as string;
    expect(output.length).toBeLessThan(1200);
    expect(output).toContain('Listing clipped at 1000 characters');
  });

  it('refuses folders outside the workspace', async () => {
    const error = await rejection(() => listFiles.execute({ path: '..' }, context));
    expect(error.code).toBe('path_outside_workspace');
  });
});
