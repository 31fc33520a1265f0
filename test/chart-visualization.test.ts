import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import chartVisualization from '../plugins/charts/chart_visualization.js';
import { terminate, toolMessages } from './support/loop-fixture.js';
import { makeFixture, runCli } from './support/run-cli.js';
import { startScriptedModelServer, type RecordedChatRequest } from './support/scripted-model-server.js';
import { useToolContexts } from './support/tool-context.js';
import type { ToolContext, ToolResult } from '../runtime/contract/tool.js';

const newContext = useToolContexts();

const sales = [
  { region: 'Northwind', revenue: 4200 },
  { region: 'Southbay', revenue: 3100 },
  { region: 'Eastfield', revenue: 5775 },
];

const barChart = {
  title: 'Revenue by region',
  mark: 'bar',
  encoding: {
    x: { field: 'region', type: 'nominal' },
    y: { field: 'revenue', type: 'quantitative' },
  },
};

async function draw(context: ToolContext, input: Record<string, unknown>): Promise<ToolResult> {
  return (await chartVisualization.execute(input as never, context)) as ToolResult;
}

/** Width and height from a PNG's IHDR chunk, after checking the signature. */
function pngSize(bytes: Buffer): { width: number; height: number } {
  expect(bytes.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  expect(bytes.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

/** The text of every axis label in a Vega SVG, axis by axis, in drawing order. */
function axisLabels(svg: string): string[] {
  const groups = svg.match(/role-axis-label"[^>]*>(.*?)<\/g>/g) ?? [];
  expect(groups.length).toBeGreaterThan(0);
  return groups.flatMap((group) => [...group.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((match) => match[1]!));
}

describe('chart_visualization', () => {
  it('draws a bar chart from inline rows as SVG, PNG of the requested size and an offline HTML page', async () => {
    const { context } = newContext();
    const result = await draw(context, { specification: barChart, data: sales, output: 'charts/revenue', width: 640, height: 360 });

    expect(result.isError).toBeUndefined();
    expect(result.files).toEqual(['charts/revenue.svg', 'charts/revenue.png', 'charts/revenue.html']);
    expect(result.content).toContain('3 row(s)');

    const svg = readFileSync(join(context.workspace, 'charts/revenue.svg'), 'utf8');
    expect(svg).toMatch(/^<svg/);
    for (const label of ['Northwind', 'Southbay', 'Eastfield', 'Revenue by region', 'revenue']) expect(svg).toContain(label);
    expect(svg).toMatch(/width="640" height="360"/);

    const png = readFileSync(join(context.workspace, 'charts/revenue.png'));
    expect(pngSize(png)).toEqual({ width: 640, height: 360 });
    expect(result.images).toEqual([{ mimeType: 'image/png', data: png.toString('base64') }]);

    const html = readFileSync(join(context.workspace, 'charts/revenue.html'), 'utf8');
    expect(html).toContain('"field":"region"');
    expect(html).toContain('"region":"Eastfield","revenue":5775');
    const vegaSource = readFileSync(join('node_modules', 'vega', 'build', 'vega.min.js'), 'utf8');
    const vegaLiteSource = readFileSync(join('node_modules', 'vega-lite', 'build', 'vega-lite.min.js'), 'utf8');
    expect(html).toContain(vegaSource.slice(0, 2000));
    expect(html).toContain(vegaLiteSource.slice(-2000));
    expect(html).not.toMatch(/<script[^>]*\ssrc=["']?https?:/i);
    expect(html).not.toMatch(/<link[^>]*href=["']?https?:/i);
  });

  it('reads the rows from a CSV file in the workspace', async () => {
    const { context } = newContext();
    mkdirSync(join(context.workspace, 'data'));
    writeFileSync(join(context.workspace, 'data/sales.csv'), 'region,revenue\nNorthwind,4200\nSouthbay,3100\nEastfield,5775\n');

    const result = await draw(context, { specification: barChart, data_file: 'data/sales.csv', output: 'revenue', formats: ['svg', 'png'], width: 500, height: 300 });

    expect(result.files).toEqual(['revenue.svg', 'revenue.png']);
    const svg = readFileSync(join(context.workspace, 'revenue.svg'), 'utf8');
    for (const label of ['Northwind', 'Southbay', 'Eastfield']) expect(svg).toContain(label);
    // Revenue is parsed as a number: the axis runs in thousands up to the largest value.
    expect(svg).toContain('5,000');
    expect(pngSize(readFileSync(join(context.workspace, 'revenue.png')))).toEqual({ width: 500, height: 300 });
  });

  it('draws dates read from a CSV file with the same axis labels as the same rows given inline', async () => {
    const { context } = newContext();
    const months = [
      { month: '2026-01', revenue: 4200 },
      { month: '2026-02', revenue: 3100 },
      { month: '2026-03', revenue: 5775 },
    ];
    writeFileSync(join(context.workspace, 'monthly.csv'), `month,revenue\n${months.map((row) => `${row.month},${row.revenue}`).join('\n')}\n`);

    for (const type of ['ordinal', 'nominal', 'temporal']) {
      const specification = { mark: 'line', encoding: { x: { field: 'month', type }, y: { field: 'revenue', type: 'quantitative' } } };
      await draw(context, { specification, data: months, output: `inline-${type}`, formats: ['svg'] });
      await draw(context, { specification, data_file: 'monthly.csv', output: `file-${type}`, formats: ['svg'] });

      const inlineLabels = axisLabels(readFileSync(join(context.workspace, `inline-${type}.svg`), 'utf8'));
      const fileLabels = axisLabels(readFileSync(join(context.workspace, `file-${type}.svg`), 'utf8'));
      expect(fileLabels, type).toEqual(inlineLabels);
      if (type !== 'temporal') expect(fileLabels.slice(0, 3), type).toEqual(['2026-01', '2026-02', '2026-03']);
    }
  });

  it('reads the rows from a JSON file in the workspace', async () => {
    const { context } = newContext();
    writeFileSync(join(context.workspace, 'sales.json'), JSON.stringify({ rows: sales }));

    const result = await draw(context, { specification: barChart, data_file: 'sales.json', output: 'revenue', formats: ['svg'] });

    expect(result.files).toEqual(['revenue.svg']);
    expect(readFileSync(join(context.workspace, 'revenue.svg'), 'utf8')).toContain('Southbay');
  });

  it('returns what breaks the Vega-Lite schema, and writes nothing', async () => {
    const { context } = newContext();
    const broken = { ...barChart, mark: 'bars', encoding: { ...barChart.encoding, colour: { field: 'region' } } };

    const error = await draw(context, { specification: broken, data: sales, output: 'broken' }).catch((caught: unknown) => caught);

    expect(error).toMatchObject({ code: 'invalid_specification' });
    const message = (error as Error).message;
    expect(message).toContain('"encoding" has an unknown property "colour"');
    expect(message).toMatch(/"mark" must be one of .*"bar"/);
    expect(() => readFileSync(join(context.workspace, 'broken.svg'))).toThrow();
  });

  it('refuses to write outside the workspace', async () => {
    const { context } = newContext();

    await expect(draw(context, { specification: barChart, data: sales, output: '../outside/chart' }))
      .rejects.toMatchObject({ code: 'path_outside_workspace' });
    await expect(draw(context, { specification: barChart, data: sales, output: '/tmp/chart' }))
      .rejects.toMatchObject({ code: 'path_outside_workspace' });
  });

  it('refuses to read data outside the workspace', async () => {
    const { context } = newContext();

    await expect(draw(context, { specification: barChart, data_file: '../secret.csv', output: 'chart' }))
      .rejects.toMatchObject({ code: 'path_outside_workspace' });
  });

  it('refuses to write to a protected path', async () => {
    const { context } = newContext();

    await expect(draw(context, { specification: barChart, data: sales, output: 'plugins/chart' }))
      .rejects.toMatchObject({ code: 'path_protected' });
  });

  it('refuses a specification that loads data from elsewhere', async () => {
    const { context } = newContext();
    const loading = { layer: [{ data: { url: 'file:///etc/passwd' }, mark: 'point' }] };

    await expect(draw(context, { specification: loading, data: sales, output: 'chart', formats: ['svg'] }))
      .rejects.toMatchObject({ code: 'external_data_refused' });
  });

  it('draws through the command, where vega runs from the build beside the bundle', async () => {
    const fixture = makeFixture({
      'agents.yaml': 'version: 1\nagents:\n  charter:\n    description: Draws charts.\n    tools: [chart_visualization, terminate]\n    max_steps: 3\n',
      'recipe.yaml': 'version: 1\nname: chart\nprompt: Draw the chart.\nagent: charter\n',
    });
    const server = await startScriptedModelServer({
      turns: [
        { toolCalls: [{ name: 'chart_visualization', arguments: { specification: barChart, data: sales, output: 'revenue', width: 300, height: 200 } }] },
        terminate('drawn'),
      ],
    });
    try {
      const run = await runCli(['run', 'recipe.yaml', '--json'], { cwd: fixture, env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: 'scripted-model' }, timeoutMs: 60_000 });
      expect(run.exitCode).toBe(0);
      const requests = server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
      expect(toolMessages(requests[1]).at(-1)!.content).toContain('revenue.svg, revenue.png, revenue.html');
      expect(readFileSync(join(run.json.workspace, 'revenue.svg'), 'utf8')).toContain('Eastfield');
      expect(pngSize(readFileSync(join(run.json.workspace, 'revenue.png')))).toEqual({ width: 300, height: 200 });
    } finally {
      await server.close();
    }
  });
});
