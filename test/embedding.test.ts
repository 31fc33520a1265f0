import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { makeFixture, repositoryRoot } from './support/run-cli.js';

/** The embedding example of docs/api.md, run against the built package entry. */
function documentedExample(): string {
  const text = readFileSync(join(repositoryRoot, 'docs', 'api.md'), 'utf8');
  const example = /## Embedding example\n\n```ts\n([\s\S]*?)```/.exec(text);
  if (!example) throw new Error('docs/api.md has no embedding example');
  return example[1];
}

describe('embedding the runtime through its public entry', () => {
  it('runs the documented example: a recipe resolved and run with a model of the caller', () => {
    const fixture = makeFixture({
      'hello.yaml': 'version: 1\nname: hello\nparameters:\n  name:\n    type: string\nprompt: Say hello to {{name}}.\nagent: assistant\n',
      // Run as TypeScript, type import and annotation included, as an embedder would write it.
      'example.mts': documentedExample().replace("from 'manus-runtime'", `from ${JSON.stringify(join(repositoryRoot, 'dist', 'bundle', 'index.mjs'))}`),
    });
    const result = spawnSync(process.execPath, ['--import', pathToFileURL(join(repositoryRoot, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href, 'example.mts'], { cwd: fixture, encoding: 'utf8' });
    expect(result.stderr).toContain('run-start');
    expect(result.stdout).toBe('success Hello from a model of my own.\n');
    expect(result.status).toBe(0);
  });
});
