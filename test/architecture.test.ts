import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ICruiseResult } from 'dependency-cruiser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { architectureDocument, cruiseLayers, describeViolation, layerGraph, repositoryRoot, violationsOf, withGraph } from '../scripts/architecture.js';

let repository: ICruiseResult;
beforeAll(async () => {
  repository = await cruiseLayers();
}, 120_000);

describe('the layers of the runtime', () => {
  it('has no import circle and no import up a layer, and plugins use only the public API', () => {
    expect(violationsOf(repository).map(describeViolation)).toEqual([]);
    expect(repository.summary.totalCruised).toBeGreaterThan(300);
  });

  it('keeps no loose file in runtime/ but the public API', () => {
    const loose = readdirSync(join(repositoryRoot, 'runtime')).filter((name) => statSync(join(repositoryRoot, 'runtime', name)).isFile());
    expect(loose).toEqual(['index.ts']);
  });

  it('keeps the kernel readable in an hour: at most 2,500 lines', () => {
    expect(linesUnder(join(repositoryRoot, 'runtime', 'kernel'))).toBeLessThanOrEqual(2500);
  });

  it('draws docs/architecture.md from the code as it is', async () => {
    const document = readFileSync(architectureDocument, 'utf8');
    expect(document, 'run `npm run architecture:graph` and commit docs/architecture.md').toBe(withGraph(document, await layerGraph(repository)));
  });
});

describe('the layer check', () => {
  const fixture = mkdtempSync(join(tmpdir(), 'manus-layers-'));
  afterAll(() => rmSync(fixture, { recursive: true, force: true }));

  function write(path: string, text: string): void {
    mkdirSync(dirname(join(fixture, path)), { recursive: true });
    writeFileSync(join(fixture, path), text);
  }

  it('fails on one import up a layer, naming both files', async () => {
    write('runtime/kernel/agent-loop.ts', "import type { ToolDefinition } from '../contract/tool.js';\nexport type Loop = ToolDefinition;\n");
    write('runtime/contract/tool.ts', "import { runs } from '../runs/run.js';\nexport interface ToolDefinition { name: string }\nexport const run = runs;\n");
    write('runtime/runs/run.ts', 'export const runs = 1;\n');
    const violations = violationsOf(await cruiseLayers(fixture, ['runtime'])).map(describeViolation);
    expect(violations).toEqual(['contract-imports-only-below: runtime/contract/tool.ts → runtime/runs/run.ts']);
  }, 60_000);

  it('fails on a circle of type-only imports, naming the files on it', async () => {
    write('runtime/config/agent.ts', "import type { Recipe } from './recipe.js';\nexport interface Agent { recipe?: Recipe }\n");
    write('runtime/config/recipe.ts', "import type { Agent } from './agent.js';\nexport interface Recipe { agent: Agent }\n");
    const violations = violationsOf(await cruiseLayers(fixture, ['runtime/config']));
    expect(violations.map((violation) => violation.rule)).toEqual(['no-circular']);
    expect(describeViolation(violations[0])).toMatch(/runtime\/config\/(agent|recipe)\.ts → runtime\/config\/(recipe|agent)\.ts \(circle: /);
  }, 60_000);

  it('fails on a plugin that reaches into another family or past the public API', async () => {
    write('plugins/browser/search.ts', "import { searchWeb } from '../web/engines.js';\nimport { run } from '../../runtime/contract/tool.js';\nexport const search = [searchWeb, run];\n");
    write('plugins/web/engines.ts', 'export const searchWeb = 1;\n');
    const violations = violationsOf(await cruiseLayers(fixture, ['plugins'])).map(describeViolation);
    expect(violations).toEqual(expect.arrayContaining([
      'plugin-families-import-only-their-own-folder: plugins/browser/search.ts → plugins/web/engines.ts',
      'plugins-import-only-the-public-api: plugins/browser/search.ts → runtime/contract/tool.ts',
    ]));
  }, 60_000);
});

function linesUnder(folder: string): number {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .reduce((total, entry) => total + readFileSync(join(entry.parentPath, entry.name), 'utf8').split('\n').length - 1, 0);
}
