/**
 * The reports' charts, written as Vega-Lite and drawn to SVG when the report is generated, so the
 * page needs no chart library to show them, works offline and opens fast. Vega is loaded only when
 * a chart is drawn (the command's start-up does not pay for it). Charts hold numbers only, never
 * text from a run, and their data is given inline: nothing is loaded from anywhere.
 */

export interface StepFigures {
  index: number;
  totalTokens: number;
  cost?: number;
  modelMs: number;
  toolsMs: number;
}

export interface ReportChart {
  /** What the chart shows, for its data-chart attribute: tokens, cost, time, durations. */
  name: string;
  caption: string;
  svg: string;
}

type Specification = Record<string, unknown>;

const width = 520;
const height = 180;

/** Cumulative tokens, and cost when the run has prices, per step with the budget as a rule; time per step split into model and tools. */
export async function runCharts(steps: readonly StepFigures[], budgets: { tokens?: number; cost?: number }): Promise<ReportChart[]> {
  if (steps.length === 0) return [];
  const charts: Array<{ name: string; caption: string; specification: Specification }> = [];
  let tokens = 0;
  let cost = 0;
  const cumulative = steps.map((step) => {
    tokens += step.totalTokens;
    cost += step.cost ?? 0;
    return { step: step.index, tokens, cost };
  });
  charts.push({
    name: 'tokens',
    caption: budgets.tokens === undefined ? 'Tokens used, cumulative, per step' : `Tokens used, cumulative, per step; the line at ${budgets.tokens} is the token budget`,
    specification: cumulativeChart('Tokens (cumulative)', cumulative.map(({ step, tokens: value }) => ({ step, value })), budgets.tokens, 'd'),
  });
  if (steps.some((step) => step.cost !== undefined) || budgets.cost !== undefined) {
    charts.push({
      name: 'cost',
      caption: budgets.cost === undefined ? 'Cost in US dollars, cumulative, per step' : `Cost in US dollars, cumulative, per step; the line at $${budgets.cost} is the cost budget`,
      specification: cumulativeChart('Cost, US$ (cumulative)', cumulative.map(({ step, cost: value }) => ({ step, value })), budgets.cost, '$.4f'),
    });
  }
  charts.push({ name: 'time', caption: 'Time per step, in seconds: the model\'s reply and the tool calls', specification: timeChart(steps) });
  return Promise.all(charts.map(async (chart) => ({ name: chart.name, caption: chart.caption, svg: await renderSvg(chart.specification) })));
}

/** How long the items of a batch took, as a histogram. */
export async function durationHistogram(durationsMs: readonly number[]): Promise<ReportChart | undefined> {
  if (durationsMs.length === 0) return undefined;
  const specification: Specification = {
    width,
    height,
    data: { values: durationsMs.map((milliseconds) => ({ seconds: milliseconds / 1000 })) },
    mark: { type: 'bar', tooltip: true },
    encoding: {
      x: { field: 'seconds', type: 'quantitative', bin: { maxbins: 20 }, title: 'Duration (s)' },
      y: { aggregate: 'count', type: 'quantitative', title: 'Items' },
    },
  };
  return { name: 'durations', caption: 'How long the items took', svg: await renderSvg(specification) };
}

function cumulativeChart(title: string, values: Array<{ step: number; value: number }>, budget: number | undefined, format: string): Specification {
  const line: Specification = {
    data: { values },
    mark: { type: 'line', point: { filled: true, size: 30 }, tooltip: true },
    encoding: {
      x: { field: 'step', type: 'quantitative', title: 'Step', axis: { tickMinStep: 1, format: 'd' } },
      y: { field: 'value', type: 'quantitative', title, axis: { format } },
    },
  };
  if (budget === undefined) return { width, height, ...line };
  const rule: Specification = {
    data: { values: [{ budget }] },
    mark: { type: 'rule', color: '#cf222e', strokeDash: [6, 4], strokeWidth: 2 },
    encoding: { y: { field: 'budget', type: 'quantitative' } },
  };
  return { width, height, layer: [line, rule] };
}

function timeChart(steps: readonly StepFigures[]): Specification {
  const values = steps.flatMap((step) => [
    { step: step.index, part: 'model', seconds: step.modelMs / 1000 },
    { step: step.index, part: 'tools', seconds: step.toolsMs / 1000 },
  ]);
  return {
    width,
    height,
    data: { values },
    mark: { type: 'bar', tooltip: true },
    encoding: {
      x: { field: 'step', type: 'ordinal', title: 'Step', axis: steps.length > 40 ? { values: steps.filter((step) => step.index % Math.ceil(steps.length / 20) === 0).map((step) => step.index) } : {} },
      y: { field: 'seconds', type: 'quantitative', title: 'Seconds', stack: 'zero' },
      color: { field: 'part', type: 'nominal', title: null, scale: { domain: ['model', 'tools'], range: ['#0969da', '#bf8700'] } },
    },
  };
}

/** A loader that loads nothing: every chart's data is inline. */
function refusingLoader() {
  const refuse = async (uri: string): Promise<never> => {
    throw new Error(`a report chart may not load ${uri}`);
  };
  return { load: refuse, sanitize: refuse, http: refuse, file: refuse };
}

async function renderSvg(specification: Specification): Promise<string> {
  const [vega, vegaLite] = await Promise.all([import('vega'), import('vega-lite')]);
  const logger = vega.logger(vega.Error);
  const compiled = vegaLite.compile({ ...specification, config: { font: 'system-ui, sans-serif', view: { stroke: null } } } as never, { logger: logger as never }).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', loader: refusingLoader() as never, logger });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
