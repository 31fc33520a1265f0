/**
 * The shipped eval example, as the README runs it: twenty countries for the country-facts recipe,
 * scored from its recording with no model configured, then shown with `manus view`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeFixture, repositoryRoot, runCli } from './support/run-cli.js';

const examples = join(repositoryRoot, 'recipes', 'examples', 'evals');

describe('the shipped eval example', () => {
  it('scores its recording offline, prints the table, and manus view writes its page with a link per run', async () => {
    const folder = makeFixture({});
    const result = await runCli(['eval', join(examples, 'country-capitals.eval.yaml'), '--replay', join(examples, 'country-capitals-recording'), '--ci', '--json'], { cwd: folder });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain('no model asked');
    const record = result.json;
    expect(record).toMatchObject({ name: 'country-capitals', status: 'replayed', models: ['default'] });
    expect(record.items).toHaveLength(20);
    expect(record.summary[0]).toMatchObject({ runs: 20, passed: 18 });
    expect(record.items.filter((item: any) => !item.passed).map((item: any) => item.row)).toEqual(['australia', 'switzerland']);
    const wrong = record.items.find((item: any) => item.row === 'australia').scores[0];
    expect(wrong).toMatchObject({ name: 'capital', passed: false, reason: 'capital: expected "Canberra", got "Sydney"' });

    const table = await runCli(['eval', join(examples, 'country-capitals.eval.yaml'), '--replay', join(examples, 'country-capitals-recording'), '--ci'], { cwd: folder });
    expect(table.stdout).toMatch(/^australia\s+0\.60 FAIL$/m);
    expect(table.stdout).toMatch(/^default: mean score 0\.960 \[/m);

    const shown = await runCli(['view', record.id], { cwd: folder });
    expect(shown.exitCode, shown.stderr).toBe(0);
    const page = readFileSync(shown.stdout.trim(), 'utf8');
    expect(page).toContain('Eval country-capitals');
    expect(page.match(/href="manus-report-runs\/[^"]+\.html"/g)).toHaveLength(20);
    const runPage = /<td>australia<\/td><td class="cell none"[^>]*>0\.60 0\/1<br><a href="(manus-report-runs\/[^"]+\.html)"/.exec(page);
    expect(runPage).not.toBeNull();
    expect(readFileSync(join(shown.stdout.trim(), '..', runPage![1]), 'utf8')).toContain('Sydney');
  });
});
