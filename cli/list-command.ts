/** `manus tools` and `manus agents`: what the loaded configuration provides. */
import { resolve } from 'node:path';
import { formatDiagnostic } from '../runtime/contract/errors.js';
import { agentsFilesFor, loadAgentsConfig, pluginFoldersFor } from '../runtime/runs/recipe/resolve-recipe.js';
import { displayPath, loadPluginFolders } from '../runtime/kernel/plugin-loading/load-plugins.js';
import { parameterLines, wrapText } from './parameter-listing.js';
import { terminalText } from '../runtime/services/terminal-text.js';

export async function listTools(options: { plugins: string[]; json?: boolean }): Promise<number> {
  const cwd = process.cwd();
  const folders = [...pluginFoldersFor(cwd), ...options.plugins.map((folder) => ({ path: resolve(cwd, folder) }))];
  const { tools, diagnostics } = await loadPluginFolders(folders, { checkSchemas: true });
  for (const diagnostic of diagnostics) process.stderr.write(`${formatDiagnostic(diagnostic)}\n`);
  const entries = [...tools.values()].sort((left, right) => left.tool.name.localeCompare(right.tool.name));
  if (options.json) {
    const list = entries.map(({ tool, file }) => ({ name: tool.name, description: tool.description, parameters: tool.parameters, file }));
    process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
  } else {
    for (const { tool, file } of entries) {
      const properties = Object.keys((tool.parameters.properties ?? {}) as object);
      const required = new Set((tool.parameters.required ?? []) as string[]);
      const signature = properties.map((name) => (required.has(name) ? name : `${name}?`)).join(', ');
      const lines = [
        `${tool.name}(${signature})`,
        ...wrapText(tool.description.split('\n')[0], '  ', '  '),
        ...parameterLines(tool.parameters, '    '),
        `  ${displayPath(file)}`,
      ];
      process.stdout.write(terminalText(`${lines.join('\n')}\n`));
    }
  }
  return diagnostics.some((diagnostic) => diagnostic.severity === 'error') ? 2 : 0;
}

export async function listAgents(options: { json?: boolean }): Promise<number> {
  const { config, diagnostics } = loadAgentsConfig(agentsFilesFor(undefined, process.cwd()));
  for (const diagnostic of diagnostics) process.stderr.write(`${formatDiagnostic(diagnostic)}\n`);
  const agents = [...config.agents.values()];
  if (options.json) {
    const list = agents.map((agent) => ({
      name: agent.name,
      description: agent.description,
      tools: agent.tools,
      llm: agent.llm,
      maxSteps: agent.maxSteps,
      file: agent.location?.file,
    }));
    process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
  } else {
    for (const agent of agents) {
      process.stdout.write(terminalText(`${agent.name}: ${agent.description}\n  tools: ${agent.tools.join(', ')}\n  model profile: ${agent.llm}, max steps: ${agent.maxSteps}\n`));
    }
  }
  return diagnostics.some((diagnostic) => diagnostic.severity === 'error') ? 2 : 0;
}
