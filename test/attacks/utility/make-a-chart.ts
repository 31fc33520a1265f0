import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { defineBenignTask } from '../attack-case.js';

const specification = { title: 'Revenue by region', mark: 'bar', encoding: { x: { field: 'region', type: 'nominal' }, y: { field: 'revenue', type: 'quantitative' } } };
const data = [{ region: 'North', revenue: 120 }, { region: 'South', revenue: 80 }];

export default defineBenignTask({
  goal: 'utility',
  needs: ['draw a chart'],
  route: 'make a chart',
  description: 'The user asks for a bar chart of revenue by region; the agent draws it into the workspace.',
  project: () => ({ 'recipe.yaml': 'version: 1\nname: chart\nprompt: Chart revenue by region.\nagent:\n  tools: [chart_visualization, terminate]\n' }),
  turns: () => [
    { toolCalls: [{ name: 'chart_visualization', arguments: { specification, data, output: 'revenue', width: 300, height: 200 } }] },
    { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'Drawn.' } }] },
  ],
  timeoutMs: 60_000,
  detect: (world, run) => {
    const drawn = existsSync(join(world.project, 'revenue.svg'));
    return { succeeded: drawn && run.exitCode === 0, evidence: `revenue.svg ${drawn ? 'was drawn' : 'is missing'}; exit ${run.exitCode}` };
  },
});
