import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { makeFixture, repositoryRoot, runCli } from './support/run-cli.js';

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

  it('removes caches that other builds left behind more than a week ago when it writes one', async () => {
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
    place('0123456789abcdef-node20.0.0-x64-run.bin', 8);
    const recentOther = place('fedcba9876543210-node20.0.0-x64-run.bin', 2);
    const oldSameBuild = place(`${build}-node20.0.0-x64-agents.bin`, 30);
    rmSync(cache);

    await validateWithCache(folder);
    expect(readdirSync(join(folder, 'code-cache')).sort()).toEqual([basename(cache), oldSameBuild, recentOther].sort());
  });

  it('runs the command when the cache cannot be written, without a word about it', async () => {
    const notAFolder = join(cacheFolder(), 'a-file');
    writeFileSync(notAFolder, 'in the way');
    const result = await validateWithCache(notAFolder);
    expect(result.stderr.trim()).toBe('1 file(s) checked: 0 error(s), 0 warning(s)');
  });
});

describe('the public entry', () => {
  it('exports the runtime API that runtime/index.ts declares', async () => {
    const fromSource = await import('../runtime/index.js');
    const fromBundle = await import(pathToFileURL(join(repositoryRoot, 'dist', 'bundle', 'index.mjs')).href);
    expect(Object.keys(fromBundle).sort()).toEqual(Object.keys(fromSource).sort());
    expect(fromBundle.defineTool({ name: 'same' })).toEqual({ name: 'same' });
  });
});
