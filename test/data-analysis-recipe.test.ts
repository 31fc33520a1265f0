/**
 * recipes/data-analysis.yaml end to end: the shipped recipe and agent, a scripted model whose turns
 * analyse a CSV with pandas, chart it with chart_visualization and write the HTML report, the real
 * sandbox, and the recipe's checks. The report is then opened in Chromium with every non-file request
 * blocked, to show it renders offline.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { findDataPython } from './support/data-python.js';
import { makeFixture, repositoryRoot, runCli, type CliResult } from './support/run-cli.js';
import { startScriptedModelServer, type RecordedChatRequest, type ScriptedTurn } from './support/scripted-model-server.js';
import { terminate, toolMessages } from './support/loop-fixture.js';

const chromiumPath = '/usr/bin/chromium';
const dataPython = findDataPython();
if (!dataPython.python) console.warn(`data-analysis recipe test skipped: ${dataPython.reason}`);
const chromiumMissing = existsSync(chromiumPath) ? undefined : `no Chromium at ${chromiumPath} (apt-get install chromium)`;
if (chromiumMissing) console.warn(`data-analysis report rendering test skipped: ${chromiumMissing}`);

const call = (name: string, args: Record<string, unknown>): ScriptedTurn => ({ toolCalls: [{ name, arguments: args }] });

const analyse = [
  'import os',
  'import pandas as pd',
  "orders = pd.read_csv('orders.csv')",
  "print('rows:', len(orders), 'columns:', ', '.join(orders.columns))",
  "totals = orders.groupby('city', as_index=False)['amount'].sum().sort_values('amount', ascending=False)",
  "os.makedirs('analysis', exist_ok=True)",
  "totals.to_csv('analysis/city_totals.csv', index=False)",
  'print(totals.to_string(index=False))',
].join('\n');

const chart = {
  specification: {
    title: 'Order total by city',
    mark: 'bar',
    encoding: {
      x: { field: 'city', type: 'nominal', sort: '-y', title: 'City' },
      y: { field: 'amount', type: 'quantitative', title: 'Order total' },
    },
  },
  data_file: 'analysis/city_totals.csv',
  output: 'charts/city_totals',
  width: 640,
  height: 360,
};

const writeReport = [
  'import base64, html',
  'import pandas as pd',
  "totals = pd.read_csv('analysis/city_totals.csv')",
  "png = base64.b64encode(open('charts/city_totals.png', 'rb').read()).decode('ascii')",
  'top = totals.iloc[0]',
  "table = totals.to_html(index=False, float_format='%.2f')",
  'page = f"""<!DOCTYPE html>',
  '<html lang="en"><head><meta charset="utf-8"><title>Orders by city</title>',
  '<style>body {{ font-family: sans-serif; max-width: 860px; margin: 2em auto; }} td, th {{ padding: 4px 8px; }}</style></head>',
  '<body><h1>Orders by city</h1>',
  '<p>Question: which city had the highest order total?</p>',
  '<p>Answer: {html.escape(top.city)}, with {top.amount:.2f} in {len(totals)} cities compared.</p>',
  '{table}',
  '<figure><img src="data:image/png;base64,{png}" alt="Order total by city"><figcaption>Order total by city</figcaption></figure>',
  '<p>Data: orders.csv, 10 rows, columns date, city, category, amount.</p>',
  '</body></html>"""',
  "open('report.html', 'w', encoding='utf-8').write(page)",
  "print('report.html written')",
].join('\n');

/** Width and height from a PNG's IHDR chunk, after checking the signature. */
function pngSize(file: string): { width: number; height: number } {
  const bytes = readFileSync(file);
  expect(bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  expect(bytes.subarray(12, 16).toString('ascii')).toBe('IHDR');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

interface RecipeRun {
  run: CliResult;
  requests: RecordedChatRequest[];
}

/** Runs the shipped recipe once on the CSV, with the scripted turns above. */
async function runDataAnalysis(): Promise<RecipeRun> {
  const fixture = makeFixture({ 'data/orders.csv': readFileSync(join(repositoryRoot, 'test', 'fixtures', 'data-analysis', 'orders.csv'), 'utf8') });
  const server = await startScriptedModelServer({
    turns: [
      call('python_execute', { code: analyse }),
      call('chart_visualization', chart),
      call('python_execute', { code: writeReport }),
      terminate('Lisbon has the highest order total, 412.75. Files: report.html, charts/city_totals.png, analysis/city_totals.csv.'),
    ],
  });
  try {
    const run = await runCli(
      [
        'run', join(repositoryRoot, 'recipes', 'data-analysis.yaml'), '--workspace-from', 'data',
        '--param', 'data=orders.csv', '--param', 'question=Which city had the highest order total?', '--json',
      ],
      { cwd: fixture, env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: 'scripted-model', MANUS_PYTHON: dataPython.python }, timeoutMs: 120_000 },
    );
    const requests = server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
    return { run, requests };
  } finally {
    await server.close();
  }
}

describe.skipIf(!dataPython.python)('the data-analysis recipe', () => {
  let recipeRun: RecipeRun;
  beforeAll(async () => {
    recipeRun = await runDataAnalysis();
  }, 150_000);

  it('analyses a CSV with pandas, draws the chart and writes a report with the numbers, which passes the recipe\'s checks', () => {
    const { run, requests } = recipeRun;
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.json.status).toBe('success');
    expect(run.json.checks.map((check: { name: string; passed: boolean }) => [check.name, check.passed])).toEqual([
      ['report.html matches /<html/', true],
      ['report.html embeds at least one chart', true],
      ['report.html is self-contained HTML', true],
    ]);

    const prompt = JSON.stringify(requests[0].body.messages);
    expect(prompt).toContain('orders.csv');
    expect(prompt).toContain('Which city had the highest order total?');
    expect(JSON.stringify(requests[0].body.tools)).toContain('"name":"chart_visualization"');
    const [analysis] = toolMessages(requests[1]);
    expect(analysis.content).toContain('rows: 10 columns: date, city, category, amount');
    expect(analysis.content).toMatch(/Lisbon\s+412\.75/);
    expect(toolMessages(requests[2]).at(-1)!.content).toContain('PNG size: 640x360 pixels.');

    const workspace = run.json.workspace as string;
    expect(readFileSync(join(workspace, 'analysis', 'city_totals.csv'), 'utf8')).toBe('city,amount\nLisbon,412.75\nPorto,216.0\nFaro,165.5\n');
    expect(pngSize(join(workspace, 'charts', 'city_totals.png'))).toEqual({ width: 640, height: 360 });
    const svg = readFileSync(join(workspace, 'charts', 'city_totals.svg'), 'utf8');
    for (const city of ['Lisbon', 'Porto', 'Faro']) expect(svg).toContain(city);
    expect(readFileSync(join(workspace, 'charts', 'city_totals.html'), 'utf8')).toContain('Order total by city');

    const report = readFileSync(join(workspace, 'report.html'), 'utf8');
    expect(report).toContain('Answer: Lisbon, with 412.75');
    for (const value of ['412.75', '216.00', '165.50']) expect(report).toContain(`<td>${value}</td>`);
    const embedded = /src="data:image\/png;base64,([^"]+)"/.exec(report)![1];
    expect(Buffer.from(embedded, 'base64')).toEqual(readFileSync(join(workspace, 'charts', 'city_totals.png')));
  });

  it.skipIf(chromiumMissing !== undefined)('writes a report that renders in Chromium with every network request blocked, and attempts none', async () => {
    const workspace = recipeRun.run.json.workspace as string;
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'] });
    try {
      const page = await browser.newPage();
      const attempted: string[] = [];
      await page.route('**/*', async (route) => {
        const url = route.request().url();
        if (url.startsWith('file:')) return route.continue();
        attempted.push(url);
        return route.abort();
      });
      await page.goto(pathToFileURL(join(workspace, 'report.html')).href, { waitUntil: 'load' });
      const images = await page.$$eval('img', (elements) => elements.map((image) => ({ complete: image.complete, width: image.naturalWidth, height: image.naturalHeight })));
      expect(images).toEqual([{ complete: true, width: 640, height: 360 }]);
      expect(await page.locator('td', { hasText: '412.75' }).count()).toBe(1);
      expect(await page.textContent('h1')).toBe('Orders by city');
      expect(attempted).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
