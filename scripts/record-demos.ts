/**
 * Regenerates the demo recordings in recipes/recordings/ by running the shipped recipes against
 * the scripted model server. The replies are written here by hand, so the recordings show what the
 * runtime does with a model's replies, not what any particular model would say.
 * Run: npx tsx scripts/record-demos.ts [demo name ...]   (all of them when none is named)
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startScriptedModelServer, type ScriptedTurn } from '../test/support/scripted-model-server.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const terminate = (message: string): ScriptedTurn => ({ toolCalls: [{ name: 'terminate', arguments: { status: 'success', message } }] });

/** The data-analysis demo's Python, as a model would write it. */
const dataAnalysisCode = {
  inspect: [
    'import pandas as pd',
    "sales = pd.read_csv('sales.csv')",
    "print('rows:', len(sales))",
    'print(sales.dtypes.to_string())',
    "print('missing values:', int(sales.isna().sum().sum()))",
    "print('months:', sales['month'].min(), 'to', sales['month'].max())",
    "print('regions:', ', '.join(sorted(sales['region'].unique())))",
    "print('products:', ', '.join(sorted(sales['product'].unique())))",
    'print(sales.head().to_string(index=False))',
  ].join('\n'),
  totals: [
    'import os',
    'import pandas as pd',
    "sales = pd.read_csv('sales.csv')",
    "os.makedirs('analysis', exist_ok=True)",
    "by_region = sales.groupby('region', as_index=False)['revenue'].sum().sort_values('revenue', ascending=False)",
    "by_region['share'] = (100 * by_region['revenue'] / by_region['revenue'].sum()).round(1)",
    "by_product = sales.groupby('product', as_index=False)[['units', 'revenue']].sum().sort_values('revenue', ascending=False)",
    "monthly = sales.pivot_table(index='month', columns='product', values='revenue', aggfunc='sum')",
    "monthly['total'] = monthly.sum(axis=1)",
    "monthly_long = sales.groupby(['month', 'product'], as_index=False)['revenue'].sum()",
    "by_region.to_csv('analysis/revenue_by_region.csv', index=False)",
    "by_product.to_csv('analysis/revenue_by_product.csv', index=False)",
    "monthly.to_csv('analysis/monthly_revenue.csv')",
    "monthly_long.to_csv('analysis/monthly_by_product.csv', index=False)",
    "print('total revenue:', f\"{sales['revenue'].sum():.2f}\")",
    "print(by_region.to_string(index=False, float_format='%.2f'))",
    "print(by_product.to_string(index=False, float_format='%.2f'))",
    "print(monthly.to_string(float_format='%.2f'))",
    "growth = 100 * (monthly['total'].iloc[-1] / monthly['total'].iloc[0] - 1)",
    "print(f'growth from the first to the last month: {growth:.1f}%')",
  ].join('\n'),
  report: [
    'import base64, html',
    'import pandas as pd',
    "sales = pd.read_csv('sales.csv')",
    "by_region = pd.read_csv('analysis/revenue_by_region.csv')",
    "by_product = pd.read_csv('analysis/revenue_by_product.csv')",
    "monthly = pd.read_csv('analysis/monthly_revenue.csv', index_col='month')",
    'def image(path):',
    "    return 'data:image/png;base64,' + base64.b64encode(open(path, 'rb').read()).decode('ascii')",
    'def table(frame, index=False):',
    "    return frame.to_html(index=index, float_format='{:,.2f}'.format, border=0)",
    "total = sales['revenue'].sum()",
    'top = by_region.iloc[0]',
    "growth = 100 * (monthly['total'].iloc[-1] / monthly['total'].iloc[0] - 1)",
    'page = f"""<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8"><title>Sales analysis</title>',
    '<style>',
    'body {{ font-family: system-ui, sans-serif; max-width: 880px; margin: 2em auto; color: #222; line-height: 1.5; }}',
    'table {{ border-collapse: collapse; margin: 1em 0; }} th, td {{ border-bottom: 1px solid #ddd; padding: 4px 12px; text-align: right; }}',
    'figure {{ margin: 1.5em 0; }} img {{ max-width: 100%; }} figcaption {{ color: #555; font-size: 0.9em; }}',
    '</style></head><body>',
    '<h1>Sales analysis, January to June 2026</h1>',
    '<p><strong>Question:</strong> Which regions and products bring in the revenue, and how does it change month by month?</p>',
    '<p><strong>Answer:</strong> revenue was {total:,.2f}. {html.escape(top.region)} brings in the most ({top.revenue:,.2f}, {top.share}%),',
    'coffee earns more than tea, and monthly revenue grew by {growth:.1f}% from {monthly.index[0]} to {monthly.index[-1]}.</p>',
    '<h2>Revenue by region</h2>{table(by_region)}',
    '<figure><img src="{image(\'charts/revenue_by_region.png\')}" alt="Revenue by region"><figcaption>Revenue by region, all months and products</figcaption></figure>',
    '<h2>Revenue by product</h2>{table(by_product)}',
    '<h2>Revenue by month</h2>{table(monthly, index=True)}',
    '<figure><img src="{image(\'charts/monthly_revenue.png\')}" alt="Monthly revenue by product"><figcaption>Monthly revenue by product</figcaption></figure>',
    '<h2>About the data</h2>',
    "<p>sales.csv: {len(sales)} rows, columns {', '.join(sales.columns)}; no missing values, nothing removed.</p>",
    '</body></html>"""',
    "open('report.html', 'w', encoding='utf-8').write(page)",
    "print('report.html:', len(page), 'characters')",
  ].join('\n'),
  readBack: [
    'import re',
    "page = open('report.html', encoding='utf-8').read()",
    "print('title:', re.search('<title>(.*?)</title>', page).group(1))",
    "print('headings:', re.findall('<h2>(.*?)</h2>', page))",
    "print('embedded charts:', len(re.findall('src=\"data:image/png;base64,', page)))",
    "print('external references:', len(re.findall('(?:src|href)=\"https?:', page)))",
    "print(re.search('<strong>Answer:</strong>(.*?)</p>', page, re.S).group(1).strip())",
  ].join('\n'),
};

/** The data-analysis demo's charts: 800 by 450 pixels, from the CSV files the analysis wrote. */
const dataAnalysisCharts = {
  byRegion: {
    specification: {
      title: 'Revenue by region',
      mark: 'bar',
      encoding: {
        x: { field: 'region', type: 'nominal', sort: '-y', title: 'Region' },
        y: { field: 'revenue', type: 'quantitative', title: 'Revenue' },
      },
    },
    data_file: 'analysis/revenue_by_region.csv',
    output: 'charts/revenue_by_region',
    width: 800,
    height: 450,
  },
  monthly: {
    specification: {
      title: 'Monthly revenue by product',
      mark: { type: 'line', point: true },
      encoding: {
        x: { field: 'month', type: 'ordinal', title: 'Month' },
        y: { field: 'revenue', type: 'quantitative', title: 'Revenue' },
        color: { field: 'product', type: 'nominal', title: 'Product' },
      },
    },
    data_file: 'analysis/monthly_by_product.csv',
    output: 'charts/monthly_revenue',
    width: 800,
    height: 450,
  },
};

/** The travel-handbook pack's demo files, as a model would write them after laying out the days. */
const travelItinerary = [
  '# Lisbon in 3 days (from Seattle)',
  '',
  '## Day 1: Wednesday 2027-05-05 - Belem',
  '- Tram 15E from Praca do Comercio to Belem (about 25 minutes, 3.10 EUR on board, less with a Viva Viagem card).',
  '- Belem Tower and the Jeronimos Monastery; pasteis de Belem at the bakery nearby.',
  '',
  '## Day 2: Thursday 2027-05-06 - Alfama',
  '- Walk up to the Castle of Sao Jorge (about 20 minutes from Baixa); fado in the evening.',
  '- Eat: grilled sardines, caldo verde. Rough cost: 60 EUR a day with entries.',
  '',
  '## Day 3: Friday 2027-05-07 - Sintra',
  '- Train from Rossio to Sintra (about 40 minutes, 2.40 EUR each way); Pena Palace.',
  '',
  '## Packing list',
  '- Comfortable shoes for the hills, a light jacket, a plug adapter (type F).',
  '',
].join('\n');

const travelHandbook = [
  '<!DOCTYPE html>',
  '<html lang="en"><head><meta charset="utf-8"><title>Lisbon travel handbook</title>',
  '<style>body { font-family: system-ui, sans-serif; max-width: 760px; margin: 2em auto; line-height: 1.5; } h2 { border-bottom: 1px solid #ccc; }</style>',
  '</head><body>',
  '<h1>Lisbon in 3 days</h1>',
  '<h2>Itinerary</h2>',
  '<ol><li>Wednesday 2027-05-05: Belem - <a href="https://www.openstreetmap.org/search?query=Belem%20Tower%2C%20Lisbon">Belem Tower</a></li>',
  '<li>Thursday 2027-05-06: Alfama - <a href="https://www.openstreetmap.org/search?query=Castle%20of%20Sao%20Jorge%2C%20Lisbon">Castle of Sao Jorge</a></li>',
  '<li>Friday 2027-05-07: Sintra - <a href="https://www.openstreetmap.org/search?query=Pena%20Palace%2C%20Sintra">Pena Palace</a></li></ol>',
  '<h2>Phrases</h2>',
  '<ul><li>Obrigado / obrigada (oh-bree-GAH-doo / -dah): thank you</li><li>Bom dia (bohm DEE-ah): good morning</li></ul>',
  '<h2>Practical tips</h2>',
  '<ul><li>Money: euro; cards are taken almost everywhere.</li><li>Transport: a Viva Viagem card for trams, metro and trains.</li><li>Emergency: 112.</li></ul>',
  '<h2>Sources</h2>',
  '<ul><li>visitlisboa.com (official tourism site)</li><li>carris.pt (trams and buses)</li></ul>',
  '</body></html>',
  '',
].join('\n');

const demos: Array<{ name: string; args: string[]; turns: ScriptedTurn[]; prepare?: () => void; folder?: string }> = [
  {
    name: 'ask',
    args: ['recipes/ask.yaml'],
    turns: [{
      content: 'A ReAct agent interleaves reasoning and acting: at each step the model thinks about what it knows, ' +
        'chooses a tool call, reads the observation, and repeats until it can answer. It grounds its answers in ' +
        'what its tools return instead of relying on memory alone.',
    }],
  },
  {
    name: 'country-facts',
    args: ['recipes/country-facts.yaml', '--param', 'country=Japan'],
    turns: [{
      toolCalls: [{
        name: 'create_chat_completion',
        arguments: { response: { country: 'Japan', capital: 'Tokyo', languages: ['Japanese'], currency: 'Japanese yen (JPY)' } },
      }],
    }],
  },
  {
    name: 'swe',
    // The workspace starts as a copy of the example, and the recording says so, so that
    // `replay --tools real` prepares the same files again.
    args: [
      'recipes/swe.yaml', '--workspace-from', 'recipes/examples/calculator',
      '--param', 'repository=workspace/calculator-demo', '--param', 'issue=average() returns the wrong value',
    ],
    prepare: () => rmSync(join(root, 'workspace', 'calculator-demo'), { recursive: true, force: true }),
    // Only the summary line of unittest: the rest names timings, which no replay repeats exactly.
    turns: [
      { content: 'First I reproduce the failure.', toolCalls: [{ name: 'bash', arguments: { command: 'python3 -m unittest 2>&1 | tail -n 1' } }] },
      { content: 'Two tests fail in average(). Let me read it.', toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'view', path: 'calculator.py' } }] },
      {
        content: 'average() divides by one less than the number of values. The mean divides by the count.',
        toolCalls: [{
          name: 'str_replace_editor',
          arguments: { command: 'str_replace', path: 'calculator.py', old_str: 'return total(values) / (len(values) - 1)', new_str: 'return total(values) / len(values)' },
        }],
      },
      { content: 'Now the tests again.', toolCalls: [{ name: 'bash', arguments: { command: 'python3 -m unittest 2>&1 | tail -n 1' } }] },
      terminate('Fixed average() in calculator.py: it divided the total by len(values) - 1; it now divides by len(values). All 4 tests pass.'),
    ],
  },
  {
    name: 'project-tour',
    // The tour is of a copy of the example project; the filesystem server is the devDependency's.
    args: ['recipes/project-tour.yaml', '--workspace-from', 'recipes/examples/calculator'],
    turns: [
      { content: 'First, what the project holds.', toolCalls: [{ name: 'mcp_files_list_directory_with_sizes', arguments: { path: '.' } }] },
      { content: 'Two Python files: the code and its tests. I read the code.', toolCalls: [{ name: 'mcp_files_read_text_file', arguments: { path: 'calculator.py' } }] },
      { content: 'And the tests, to see how it is checked.', toolCalls: [{ name: 'mcp_files_read_text_file', arguments: { path: 'test_calculator.py' } }] },
      terminate([
        'This is a small Python calculator library with its tests (I read calculator.py and test_calculator.py).',
        'calculator.py defines total() and average() over a list of numbers; test_calculator.py checks both with unittest.',
        'Run `python3 -m unittest` in the project folder to check that it works; note that average() divides by',
        'len(values) - 1 rather than len(values), which the tests will question.',
      ].join(' ')),
    ],
  },
  {
    name: 'data-analysis',
    // The workspace starts as a copy of the sample data. Every output below is deterministic (no
    // timings, paths or random names), so `replay --tools real` compares equal.
    args: [
      'recipes/data-analysis.yaml', '--workspace-from', 'recipes/examples/sales', '--param', 'data=sales.csv',
      '--param', 'question=Which regions and products bring in the revenue, and how does it change month by month?',
    ],
    turns: [
      {
        content: 'First I load the data and look at its shape, types and gaps.',
        toolCalls: [{ name: 'python_execute', arguments: { code: dataAnalysisCode.inspect } }],
      },
      {
        content: 'Clean: 48 rows, no gaps. Now the totals by region, product and month.',
        toolCalls: [{ name: 'python_execute', arguments: { code: dataAnalysisCode.totals } }],
      },
      {
        content: 'East leads and revenue grows every month. Two charts: revenue by region, and monthly revenue by product.',
        toolCalls: [
          { name: 'chart_visualization', arguments: dataAnalysisCharts.byRegion },
          { name: 'chart_visualization', arguments: dataAnalysisCharts.monthly },
        ],
      },
      {
        content: 'Now the report, written from the computed tables and the PNG files.',
        toolCalls: [{ name: 'python_execute', arguments: { code: dataAnalysisCode.report } }],
      },
      {
        content: 'Reading the report back to check it.',
        toolCalls: [{ name: 'python_execute', arguments: { code: dataAnalysisCode.readBack } }],
      },
      terminate(
        'Revenue was 29,261.00 over January to June 2026. East brings in the most (9,850.00, 33.7%), then North ' +
          '(7,944.00), South (6,414.50) and West (5,052.50). Coffee earns 16,751.00 (57.2%) against 12,510.00 for tea. ' +
          'Monthly revenue rose every month, from 4,418.00 in January to 5,313.00 in June (+20.3%), driven by coffee; ' +
          "West's tea sales fell. Files: report.html, charts/revenue_by_region.png and charts/monthly_revenue.png " +
          '(with .svg and .html), analysis/*.csv.',
      ),
    ],
  },
  {
    name: 'planning-flow',
    // The planner plans two steps for two executors, each carries out its own, and the planner answers.
    args: ['recipes/planning-flow.yaml', '--param', 'task=What is the sum of the whole numbers from 1 to 100? Save the result with how it was found in result.md.'],
    turns: [
      {
        content: 'Two steps: compute, then write it down.',
        toolCalls: [{
          name: 'create_chat_completion',
          arguments: {
            response: {
              title: 'Sum 1 to 100 and record it',
              steps: [
                { title: 'Compute the sum', description: 'Compute the sum of the whole numbers from 1 to 100 with Python and report the number.', executor: 'manus' },
                { title: 'Record the result', description: 'Write result.md in the workspace with the sum and how it was computed.', executor: 'data_analysis' },
              ],
            },
          },
        }],
      },
      { content: 'I compute it.', toolCalls: [{ name: 'python_execute', arguments: { code: 'print(sum(range(1, 101)))' } }] },
      terminate('The sum of the whole numbers from 1 to 100 is 5050, computed with sum(range(1, 101)).'),
      {
        content: 'I write the result file.',
        toolCalls: [{
          name: 'str_replace_editor',
          arguments: { command: 'create', path: 'result.md', file_text: '# Sum of 1 to 100\n\n5050, computed in Python with `sum(range(1, 101))` (Gauss: 100 x 101 / 2).\n' },
        }],
      },
      terminate('Wrote result.md with the sum, 5050, and how it was computed.'),
      terminate('The sum of the whole numbers from 1 to 100 is 5050 (100 x 101 / 2, checked in Python). It is saved, with how it was found, in result.md.'),
    ],
  },
  {
    name: 'travel-handbook',
    // Recorded in the pack's own folder, with the pack's agent and its trip_calendar and map_link
    // tools, so the recording travels with the pack and replays wherever it is installed.
    folder: 'recipes/packs/travel-handbook',
    args: ['recipes/travel-handbook.yaml', '--param', 'destination=Lisbon', '--param', 'dates=3 days in May'],
    turns: [
      { content: 'First the days of the trip.', toolCalls: [{ name: 'trip_calendar', arguments: { start: '2027-05-05', days: 3 } }] },
      {
        content: 'Now a map link for each main sight.',
        toolCalls: [
          { name: 'map_link', arguments: { place: 'Belem Tower', near: 'Lisbon' } },
          { name: 'map_link', arguments: { place: 'Castle of Sao Jorge', near: 'Lisbon' } },
          { name: 'map_link', arguments: { place: 'Pena Palace', near: 'Sintra' } },
        ],
      },
      { content: 'The itinerary.', toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'create', path: 'itinerary.md', file_text: travelItinerary } }] },
      { content: 'The handbook.', toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'create', path: 'handbook.html', file_text: travelHandbook } }] },
      { content: 'I read the handbook back.', toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'view', path: 'handbook.html' } }] },
      terminate('Lisbon in 3 days, 5 to 7 May 2027: Belem, Alfama and Sintra. Wrote itinerary.md and handbook.html (itinerary, map links, phrases, tips, sources).'),
    ],
  },
];

const chosen = process.argv.slice(2);
const unknown = chosen.filter((name) => !demos.some((demo) => demo.name === name));
if (unknown.length > 0) throw new Error(`no demo named ${unknown.join(', ')}; the demos are ${demos.map((demo) => demo.name).join(', ')}`);

for (const demo of demos.filter((each) => chosen.length === 0 || chosen.includes(each.name))) {
  demo.prepare?.();
  const folder = join(root, demo.folder ?? '.');
  const server = await startScriptedModelServer({ turns: demo.turns });
  try {
    // The server answers from this process, so the command must run without blocking it.
    const recording = demo.folder ? `recordings/${demo.name}.jsonl` : `recipes/recordings/${demo.name}.jsonl`;
    const child = spawn(process.execPath, [join(root, 'dist', 'bundle', 'main.js'), 'run', ...demo.args, '--record', recording, '--quiet'], {
      cwd: folder,
      // The data demo's Python needs pandas: MANUS_PYTHON names one that has it (see .ci/run).
      env: { PATH: process.env.PATH, HOME: process.env.HOME, MANUS_PYTHON: process.env.MANUS_PYTHON, OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: 'scripted-model' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const status = await new Promise((resolve) => child.on('close', resolve));
    process.stdout.write(`${demo.name}: exit ${String(status)}\n`);
  } finally {
    await server.close();
    // A pack's folder ships: the run's workspace and run folder do not stay in it.
    if (demo.folder) for (const made of ['workspace', '.manus']) rmSync(join(folder, made), { recursive: true, force: true });
  }
}
