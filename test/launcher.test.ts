import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { makeFixture, repositoryRoot, runCli } from './support/run-cli.js';
import { startScriptedModelServer } from './support/scripted-model-server.js';

const recipe = 'version: 1\nname: hello\nagent: assistant\nprompt: Say hello.\n';

function cacheFolder(): string {
  return mkdtempSync(join(tmpdir(), 'manus-cache-'));
}

function codeCacheFiles(folder: string): string[] {
  return readdirSync(join(folder, 'code-cache')).map((name) => join(folder, 'code-cache', name));
}

async function validateWithCache(folder: string) {
  const result = await runCli(['validate', 'hello.yaml'], { cwd: makeFixture({ 'hello.yaml': recipe }), env: { MANUS_CACHE_DIR: folder } });
  expect(result.stderr).toContain('1 file(s) checked: 0 error(s)');
  expect(result.exitCode).toBe(0);
  return result;
}

describe('the launcher\'s code cache', () => {
  it('is written on the first start and used, unchanged, on the next', async () => {
    const folder = cacheFolder();
    await validateWithCache(folder);
    const [cache] = codeCacheFiles(folder);
    expect(cache).toMatch(new RegExp(`-node${process.versions.node}-${process.arch}-validate\\.bin$`));
    const first = statSync(cache);
    expect(first.size).toBeGreaterThan(10_000);

    await validateWithCache(folder);
    // A cache V8 refuses is written again at exit; an accepted one is left alone.
    expect(codeCacheFiles(folder)).toEqual([cache]);
    expect(statSync(cache).mtimeMs).toBe(first.mtimeMs);
  });

  it('keeps the cache of `run`, which sets V8 flags of its own before compiling, across starts', async () => {
    const folder = cacheFolder();
    const model = await startScriptedModelServer({ turns: [{ content: 'Hello.' }, { content: 'Hello again.' }] });
    try {
      const run = () => runCli(['run', 'hello.yaml', '--json'], {
        cwd: makeFixture({ 'hello.yaml': recipe }),
        env: { MANUS_CACHE_DIR: folder, OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model' },
      });
      const first = await run();
      expect(first.json?.answer).toBe('Hello.');
      const [cache] = codeCacheFiles(folder);
      expect(cache).toMatch(/-run\.bin$/);
      const written = statSync(cache).mtimeMs;
      const second = await run();
      expect(second.json?.answer).toBe('Hello again.');
      // V8 refuses a cache made under other flags; a refused cache would be written again at exit.
      expect(codeCacheFiles(folder)).toEqual([cache]);
      expect(statSync(cache).mtimeMs).toBe(written);
    } finally {
      await model.close();
    }
  });

  it('keeps one cache per command', async () => {
    const folder = cacheFolder();
    await validateWithCache(folder);
    const listing = await runCli(['agents'], { cwd: makeFixture({}), env: { MANUS_CACHE_DIR: folder } });
    expect(listing.exitCode).toBe(0);
    expect(codeCacheFiles(folder).map((file) => file.replace(/.*-/, '')).sort()).toEqual(['agents.bin', 'validate.bin']);
  });

  it.each([
    ['garbage', () => Buffer.from('not a code cache at all'.repeat(100))],
    ['a cut-off cache', (valid: Buffer) => valid.subarray(0, Math.floor(valid.length / 2))],
  ])('replaces %s and still runs the command', async (_label, damage) => {
    const folder = cacheFolder();
    await validateWithCache(folder);
    const [cache] = codeCacheFiles(folder);
    const valid = readFileSync(cache);
    const damaged = damage(valid);
    writeFileSync(cache, damaged);

    await validateWithCache(folder);
    const rewritten = readFileSync(cache);
    expect(rewritten.equals(damaged)).toBe(false);
    expect(rewritten.length).toBeGreaterThan(10_000);
  });

  it('removes caches that other builds or Node versions left more than a week ago when it writes one', async () => {
    const folder = cacheFolder();
    await validateWithCache(folder);
    const [cache] = codeCacheFiles(folder);
    const build = basename(cache).split('-')[0];
    const place = (name: string, ageDays: number) => {
      const file = join(folder, 'code-cache', name);
      writeFileSync(file, 'cache');
      const time = new Date(Date.now() - ageDays * 24 * 60 * 60 * 1000);
      utimesSync(file, time, time);
      return name;
    };
    const thisNode = `node${process.versions.node}-${process.arch}`;
    place(`0123456789abcdef.x-${thisNode}-run.bin`, 8);
    place(`${build}-node18.0.0-${process.arch}-run.bin`, 8);
    const recentOther = place(`fedcba9876543210.x-${thisNode}-run.bin`, 2);
    const oldSameBuild = place(`${build}-${thisNode}-agents.bin`, 30);
    rmSync(cache);

    await validateWithCache(folder);
    expect(readdirSync(join(folder, 'code-cache')).sort()).toEqual([basename(cache), oldSameBuild, recentOther].sort());
  });

  it('uses no cache in a folder that others can write to', async () => {
    const folder = cacheFolder();
    mkdirSync(join(folder, 'code-cache'));
    chmodSync(join(folder, 'code-cache'), 0o777);
    await validateWithCache(folder);
    await validateWithCache(folder);
    expect(codeCacheFiles(folder)).toEqual([]);
  });

  it('runs the command when the cache cannot be written, without a word about it', async () => {
    const notAFolder = join(cacheFolder(), 'a-file');
    writeFileSync(notAFolder, 'in the way');
    const result = await validateWithCache(notAFolder);
    expect(result.stderr.trim()).toBe('1 file(s) checked: 0 error(s), 0 warning(s)');
  });
});

describe('the bundle', () => {
  it('runs in strict mode, as the ES modules it is built from did', () => {
    for (const file of ['manus.cjs', 'main.js', 'load-module-file.cjs', 'index.cjs']) {
      const lines = readFileSync(join(repositoryRoot, 'dist', 'bundle', file), 'utf8').split('\n').filter((line) => !line.startsWith('#!'));
      expect(lines[0], file).toBe('"use strict";');
    }
  });
});

describe('the public entry', () => {
  it('exports the runtime API that runtime/index.ts declares, to ES modules and to CommonJS alike', async () => {
    const fromSource = Object.keys(await import('../runtime/index.js')).sort();
    const fromBundle = await import(pathToFileURL(join(repositoryRoot, 'dist', 'bundle', 'index.mjs')).href);
    expect(Object.keys(fromBundle).sort()).toEqual(fromSource);
    expect(fromBundle.defineTool({ name: 'same' })).toEqual({ name: 'same' });
    const required = createRequire(import.meta.url)(join(repositoryRoot, 'dist', 'bundle', 'index.cjs')) as Record<string, unknown>;
    expect(Object.keys(required).sort()).toEqual(fromSource);
    expect(required.ToolError).toBe(fromBundle.ToolError);
  });
});
