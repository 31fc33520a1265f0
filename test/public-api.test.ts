import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from './support/run-cli.js';

/** The names runtime/index.ts exports, values and types alike. */
function exportedNames(): string[] {
  const text = readFileSync(join(repositoryRoot, 'runtime', 'index.ts'), 'utf8');
  return [...text.matchAll(/^export (?:type )?\{([^}]+)\}/gm)]
    .flatMap((match) => match[1].split(','))
    .map((name) => name.trim())
    .filter(Boolean);
}

/** The names docs/api.md documents: the first column of its tables. */
function documentedNames(): string[] {
  const text = readFileSync(join(repositoryRoot, 'docs', 'api.md'), 'utf8');
  return [...text.matchAll(/^\| `(\w+)` \|/gm)].map((match) => match[1]);
}

/** Every import specifier of the TypeScript files under a folder, with the importing file. */
function importsUnder(folder: string): Array<{ file: string; specifier: string }> {
  const files = readdirSync(folder, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts'));
  return files.flatMap((name) => {
    const file = join(folder, name);
    const text = readFileSync(file, 'utf8');
    return [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'";]*?from\s+'([^']+)'|import\('([^']+)'\)/g)].map((match) => ({ file, specifier: match[1] ?? match[2] }));
  });
}

const packageJson = JSON.parse(readFileSync(join(repositoryRoot, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };

describe('the public API', () => {
  it('exports exactly the names docs/api.md documents, each once', () => {
    const exported = exportedNames();
    expect(new Set(exported).size).toBe(exported.length);
    expect([...exported].sort()).toEqual([...documentedNames()].sort());
  });

  it('stays small', () => {
    expect(exportedNames().length).toBeLessThanOrEqual(49);
  });
});

describe('the kernel and the plugins', () => {
  it('the kernel imports nothing from the plugins folder', () => {
    const pluginsFolder = join(repositoryRoot, 'plugins');
    const reaching = importsUnder(join(repositoryRoot, 'runtime'))
      .filter(({ specifier }) => specifier.startsWith('.'))
      .filter(({ file, specifier }) => !relative(pluginsFolder, resolve(dirname(file), specifier)).startsWith('..'));
    expect(reaching).toEqual([]);
  });

  it('the built-in plugins use only the public API, their own modules, Node and declared dependencies', () => {
    const pluginsFolder = join(repositoryRoot, 'plugins');
    const outside = importsUnder(pluginsFolder).filter(({ file, specifier }) => {
      if (specifier === 'manus-runtime') return false;
      if (specifier.startsWith('.')) return relative(pluginsFolder, resolve(dirname(file), specifier)).startsWith('..');
      const packageName = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
      return !(builtinModules.includes(specifier.replace(/^node:/, '')) || packageName in packageJson.dependencies);
    });
    expect(outside).toEqual([]);
  });
});
