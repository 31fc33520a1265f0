import { chmodSync, chownSync, cpSync, existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { compiledCodeKey, compiledPluginsFolder, openCompiledCodeCache, type CompiledCodeCache } from '../runtime/services/plugin-compilation/compiled-code-cache.js';
import { esbuildTranspiler, type Transpiler } from '../runtime/services/plugin-compilation/typescript-transpiler.js';
import { typeScriptModuleLoader } from '../runtime/kernel/plugin-loading/load-typescript-module.js';
import { protectedPathsFor } from '../runtime/runs/protected-path-list.js';
import { loadAgentsConfig, packageAgentsFile } from '../runtime/runs/recipe/resolve-recipe.js';
import { ProtectedPaths } from '../runtime/services/protected-paths/protected-paths.js';

const runningAsRoot = process.getuid?.() === 0;
const otherUser = 65534;
if (!runningAsRoot) console.warn('the tests of entries and folders owned by another user are skipped: only root can give a file to another user');

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function scratch(): string {
  const folder = mkdtempSync(join(tmpdir(), 'manus-ts-cache-'));
  folders.push(folder);
  return folder;
}

const esbuild = esbuildTranspiler();
if (!esbuild) throw new Error('esbuild is a dependency of the runtime: its executable should be installed');

/** esbuild, counting its compilations. */
function countingTranspiler(): Transpiler & { compiled: string[] } {
  const compiled: string[] = [];
  return { identity: esbuild!.identity, compiled, transpile: (source, file) => (compiled.push(file), esbuild!.transpile(source, file)) };
}

function plugin(answer: string): string {
  return `import { defineTool } from 'manus-runtime';\ninterface Input { text: string }\nexport default defineTool<Input>({ name: 'answer', description: 'Answers.', parameters: { type: 'object' }, execute: (_input: Input) => '${answer}' });\n`;
}

const runtime = { defineTool: <T>(tool: T) => tool };

function load(file: string, transpiler: Transpiler, cache: CompiledCodeCache | undefined): string {
  const exported = typeScriptModuleLoader({ transpiler, cache, virtualModules: { 'manus-runtime': runtime } }).load(file) as { default: { execute(input: unknown): string } };
  return exported.default.execute({});
}

function openCache(folder: string): CompiledCodeCache {
  const opened = openCompiledCodeCache(folder);
  if (!('cache' in opened)) throw new Error(`cache refused: ${opened.refused}`);
  return opened.cache;
}

/** A cache entry as the cache writes one, holding `code`. */
function entryText(key: string, code: string): string {
  return `// manus-runtime compiled plugin ${key} ${createHash('sha256').update(code).digest('hex')}\n${code}`;
}

const planted = "module.exports = { __esModule: true, default: { execute: () => 'planted' } };\n";

describe('the compiled-plugin cache', () => {
  it('compiles a plugin once: a copy in another folder is not compiled again, and its folder is 0700', () => {
    const root = scratch();
    const cacheFolder = join(root, 'cache', 'compiled-plugins');
    mkdirSync(join(root, 'first'));
    writeFileSync(join(root, 'first', 'tool.ts'), plugin('first'));
    const first = countingTranspiler();
    expect(load(join(root, 'first', 'tool.ts'), first, openCache(cacheFolder))).toBe('first');
    expect(first.compiled).toEqual([join(root, 'first', 'tool.ts')]);
    expect(lstatSync(cacheFolder).mode & 0o777).toBe(0o700);
    expect(readdirSync(cacheFolder)).toEqual([`${compiledCodeKey(first.identity, plugin('first'))}.cjs`]);

    cpSync(join(root, 'first'), join(root, 'copy'), { recursive: true });
    const copy = countingTranspiler();
    expect(load(join(root, 'copy', 'tool.ts'), copy, openCache(cacheFolder))).toBe('first');
    expect(copy.compiled).toEqual([]);
  });

  it('compiles a plugin whose text changed, and never runs the old one', () => {
    const root = scratch();
    const cache = join(root, 'compiled-plugins');
    writeFileSync(join(root, 'tool.ts'), plugin('before'));
    expect(load(join(root, 'tool.ts'), countingTranspiler(), openCache(cache))).toBe('before');
    writeFileSync(join(root, 'tool.ts'), plugin('after'));
    expect(load(join(root, 'tool.ts'), countingTranspiler(), openCache(cache))).toBe('after');
  });

  it('stores under a text\'s hash the code of that very text, even when the file is edited while it compiles', () => {
    const root = scratch();
    const file = join(root, 'tool.ts');
    writeFileSync(file, plugin('hashed'));
    // The edit lands after the text was read and hashed, before the compiled code is stored and run.
    const editing: Transpiler = { identity: esbuild.identity, transpile: (source, name) => (writeFileSync(file, plugin('edited')), esbuild.transpile(source, name)) };
    expect(load(file, editing, openCache(join(root, 'compiled-plugins')))).toBe('hashed');
    const stored = openCache(join(root, 'compiled-plugins')).read(compiledCodeKey(esbuild.identity, plugin('hashed')));
    expect(stored).toContain('"hashed"');
    expect(stored).not.toContain('edited');
    const later = countingTranspiler();
    expect(load(file, later, openCache(join(root, 'compiled-plugins')))).toBe('edited');
    expect(later.compiled).toEqual([file]);
  });

  it('refuses an entry whose name is the right hash but whose code was swapped, or that was renamed from another key', () => {
    const root = scratch();
    const cacheFolder = join(root, 'compiled-plugins');
    writeFileSync(join(root, 'tool.ts'), plugin('genuine'));
    const key = compiledCodeKey(esbuild.identity, plugin('genuine'));
    const entry = join(cacheFolder, `${key}.cjs`);
    load(join(root, 'tool.ts'), esbuild, openCache(cacheFolder));

    // The first line kept, the code after it replaced.
    const genuine = readFileSync(entry, 'utf8');
    writeFileSync(entry, `${genuine.slice(0, genuine.indexOf('\n'))}\n${planted}`);
    const swapped = countingTranspiler();
    expect(load(join(root, 'tool.ts'), swapped, openCache(cacheFolder))).toBe('genuine');
    expect(swapped.compiled).toHaveLength(1);
    expect(readFileSync(entry, 'utf8')).toBe(genuine);

    // A sound entry of another text, renamed to this text's key.
    rmSync(entry);
    writeFileSync(entry, entryText(compiledCodeKey(esbuild.identity, 'other'), planted));
    expect(load(join(root, 'tool.ts'), countingTranspiler(), openCache(cacheFolder))).toBe('genuine');
    expect(readFileSync(entry, 'utf8')).toBe(genuine);
  });

  it('refuses an entry that is a link, to a file or a hard link, however sound its text', () => {
    const root = scratch();
    const cacheFolder = join(root, 'compiled-plugins');
    writeFileSync(join(root, 'tool.ts'), plugin('genuine'));
    const key = compiledCodeKey(esbuild.identity, plugin('genuine'));
    openCache(cacheFolder);
    writeFileSync(join(root, 'elsewhere.cjs'), entryText(key, planted));
    symlinkSync(join(root, 'elsewhere.cjs'), join(cacheFolder, `${key}.cjs`));
    expect(load(join(root, 'tool.ts'), countingTranspiler(), openCache(cacheFolder))).toBe('genuine');
    rmSync(join(cacheFolder, `${key}.cjs`));
    linkSync(join(root, 'elsewhere.cjs'), join(cacheFolder, `${key}.cjs`));
    expect(load(join(root, 'tool.ts'), countingTranspiler(), openCache(cacheFolder))).toBe('genuine');
  });

  it('is not used when its folder is a link, even to a folder of this user\'s', () => {
    const root = scratch();
    const target = join(root, 'target');
    mkdirSync(target, { mode: 0o700 });
    writeFileSync(join(root, 'tool.ts'), plugin('genuine'));
    writeFileSync(join(target, `${compiledCodeKey(esbuild.identity, plugin('genuine'))}.cjs`), entryText(compiledCodeKey(esbuild.identity, plugin('genuine')), planted));
    symlinkSync(target, join(root, 'compiled-plugins'));
    const opened = openCompiledCodeCache(join(root, 'compiled-plugins'));
    expect(opened).toEqual({ refused: expect.stringMatching(/symbolic link/) });
    expect(load(join(root, 'tool.ts'), esbuild, undefined)).toBe('genuine');
    expect(readdirSync(target)).toHaveLength(1);
  });

  it('is not used when group or others can write its folder', () => {
    const root = scratch();
    mkdirSync(join(root, 'compiled-plugins'), { mode: 0o700 });
    chmodSync(join(root, 'compiled-plugins'), 0o777);
    expect(openCompiledCodeCache(join(root, 'compiled-plugins'))).toEqual({ refused: expect.stringMatching(/written by group or others/) });
  });

  it.skipIf(!runningAsRoot)('is not used when another user made its folder first, with an entry planted for the plugin', () => {
    const root = scratch();
    const cacheFolder = join(root, 'compiled-plugins');
    mkdirSync(cacheFolder, { mode: 0o700 });
    const key = compiledCodeKey(esbuild.identity, plugin('genuine'));
    writeFileSync(join(cacheFolder, `${key}.cjs`), entryText(key, planted));
    chownSync(join(cacheFolder, `${key}.cjs`), otherUser, otherUser);
    chownSync(cacheFolder, otherUser, otherUser);
    expect(openCompiledCodeCache(cacheFolder)).toEqual({ refused: expect.stringMatching(/belongs to another user/) });
  });

  it.skipIf(!runningAsRoot)('refuses an entry another user planted in this user\'s folder, and replaces it', () => {
    const root = scratch();
    const cacheFolder = join(root, 'compiled-plugins');
    writeFileSync(join(root, 'tool.ts'), plugin('genuine'));
    const cache = openCache(cacheFolder);
    const key = compiledCodeKey(esbuild.identity, plugin('genuine'));
    writeFileSync(join(cacheFolder, `${key}.cjs`), entryText(key, planted));
    chownSync(join(cacheFolder, `${key}.cjs`), otherUser, otherUser);
    expect(load(join(root, 'tool.ts'), countingTranspiler(), cache)).toBe('genuine');
    expect(lstatSync(join(cacheFolder, `${key}.cjs`)).uid).toBe(process.getuid!());
  });

  it('leaves no temporary file behind, and keeps a sound entry another run wrote', () => {
    const root = scratch();
    const cache = openCache(join(root, 'compiled-plugins'));
    const key = compiledCodeKey(esbuild.identity, 'text');
    cache.write(key, 'module.exports = 1;\n');
    const inode = lstatSync(join(root, 'compiled-plugins', `${key}.cjs`)).ino;
    cache.write(key, 'module.exports = 1;\n');
    expect(lstatSync(join(root, 'compiled-plugins', `${key}.cjs`)).ino).toBe(inode);
    expect(readdirSync(join(root, 'compiled-plugins'))).toEqual([`${key}.cjs`]);
  });

  it('removes the entries written longest ago once it holds 500', () => {
    const root = scratch();
    const folder = join(root, 'compiled-plugins');
    const cache = openCache(folder);
    for (let index = 0; index < 500; index += 1) {
      const key = compiledCodeKey('old', String(index));
      writeFileSync(join(folder, `${key}.cjs`), entryText(key, 'module.exports = 1;\n'));
      utimesSync(join(folder, `${key}.cjs`), 1_000 + index, 1_000 + index);
    }
    const newest = compiledCodeKey('new', 'text');
    cache.write(newest, 'module.exports = 2;\n');
    const left = readdirSync(folder);
    expect(left).toHaveLength(401);
    expect(left).toContain(`${newest}.cjs`);
    expect(left).toContain(`${compiledCodeKey('old', '499')}.cjs`);
    expect(left).not.toContain(`${compiledCodeKey('old', '0')}.cjs`);
  });
});

describe('the compiled plugins folder is protected', () => {
  it('is on every run\'s list, compared after each command: an entry an agent writes is removed and the run stopped', async () => {
    const root = scratch();
    const environment = { HOME: root, XDG_CACHE_HOME: join(root, 'cache') };
    const folder = compiledPluginsFolder(join(root, 'cache', 'manus-runtime'))!;
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const entries = protectedPathsFor({ agentsConfig: loadAgentsConfig([packageAgentsFile]).config }, { cwd: root, workspace: root, runsDirectory: join(root, '.manus', 'runs'), environment });
    expect(entries).toContainEqual(expect.objectContaining({ path: folder, kind: 'folder', watched: true }));
    const guard = new ProtectedPaths(entries);
    await guard.capture();
    writeFileSync(join(folder, `${compiledCodeKey(esbuild.identity, plugin('future'))}.cjs`), planted);
    await expect(guard.verify()).rejects.toThrow(/compiled plugins/);
    expect(readdirSync(folder)).toEqual([]);
    expect(existsSync(folder)).toBe(true);
  });
});
