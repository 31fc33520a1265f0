/** `manus inspect <recipe | pack>`: what it would use and start, and what needs consent, before anything runs. */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../runtime/contract/errors.js';
import { inspectPack, inspectRecipe, type InspectedPluginFolder, type PackInspection, type RecipeInspection } from '../runtime/runs/inspect.js';
import { findInstalledPack, mayNamePack } from '../runtime/features/packs/installed-packs.js';
import { locateRecipe } from '../runtime/features/packs/locate-recipe.js';
import { readPack } from '../runtime/config/pack-manifest.js';
import { shownPath } from '../runtime/kernel/plugin-loading/plugin-scan.js';
import { packageRoot } from '../runtime/config/package-root.js';
import { ExitCode } from './exit-codes.js';
import { terminalText } from '../runtime/services/terminal-text.js';

export async function inspectCommand(target: string, options: { json?: boolean }): Promise<number> {
  const cwd = process.cwd();
  const inspection = await inspectTarget(target, cwd);
  if (options.json) process.stdout.write(`${JSON.stringify(inspection, null, 2)}\n`);
  // A recipe's or pack's names and descriptions are its author's: shown terminal-safe.
  else process.stdout.write(terminalText(`${(inspection.kind === 'pack' ? packLines(inspection, cwd) : recipeLines(inspection, cwd)).join('\n')}\n`));
  return ExitCode.success;
}

async function inspectTarget(target: string, cwd: string): Promise<RecipeInspection | PackInspection> {
  const path = resolve(cwd, target);
  if (existsSync(path) && statSync(path).isDirectory()) {
    const pack = readPack(path);
    if (!pack) throw new UsageError(`${path} is a folder but not a pack (no package.json with a "manus" field); inspect a recipe file or a pack`);
    return inspectPack(pack, cwd);
  }
  if (!existsSync(path) && mayNamePack(target)) {
    const pack = findInstalledPack(target, cwd);
    if (pack) return inspectPack(pack, cwd);
  }
  return inspectRecipe(locateRecipe(target, cwd).file, cwd);
}

function packLines(pack: PackInspection, cwd: string): string[] {
  const lines = [
    `pack ${pack.name}${pack.version ? ` ${pack.version}` : ''}${pack.description ? `: ${pack.description}` : ''}`,
    `  folder: ${shownPath(pack.folder, cwd)}`,
    `  agents: ${pack.agents.join(', ') || 'none'}${pack.agentsFile ? ` (${shownPath(pack.agentsFile, cwd)})` : ''}`,
    `  recipes: ${pack.recipes.map((recipe) => recipe.runAs ?? recipe.name).join(', ') || 'none'}`,
    ...pluginFolderLines(pack.pluginFolders, cwd),
    `  needs: ${pack.grantsNeeded.length > 0 ? `--trust ${pack.grantsNeeded.join(',')} for some of its recipes` : 'no --trust grant'}`,
  ];
  for (const recipe of pack.recipes) lines.push('', ...recipeLines(recipe, cwd));
  return lines;
}

function recipeLines(recipe: RecipeInspection, cwd: string): string[] {
  const lines = [`recipe ${recipe.name}: ${recipe.description}`, `  file: ${shownPath(recipe.file, cwd)}`];
  if (recipe.runAs) lines.push(`  run as: manus run ${recipe.runAs}`);
  if (recipe.pack) lines.push(`  pack: ${recipe.pack.name}${recipe.pack.version ? ` ${recipe.pack.version}` : ''} (${shownPath(recipe.pack.folder, cwd)})`);
  if (recipe.parameters.length > 0) {
    lines.push('parameters:');
    for (const parameter of recipe.parameters) {
      const detail = parameter.default !== undefined ? `default ${JSON.stringify(parameter.default)}` : parameter.required ? 'required' : 'optional';
      lines.push(`  ${parameter.name} (${parameter.type}, ${detail})`);
    }
  }
  lines.push('agents:');
  for (const agent of recipe.agents) {
    const where = [agent.pack ? `pack ${agent.pack}` : '', agent.file ? shownPath(agent.file, cwd) : ''].filter(Boolean).join(', ');
    const steps = agent.steps.length > 0 ? `, steps ${agent.steps.join(', ')}` : '';
    lines.push(`  ${agent.name}${where ? ` (${where})` : ''}: model profile ${agent.modelProfile}${agent.endpoint ? ` at ${agent.endpoint}` : ''}${steps}`);
    for (const tool of agent.tools) {
      const base = tool.source === 'built-in plugin' ? packageRoot : cwd;
      const origin = tool.source === 'mcp server' ? `MCP server ${tool.server ?? '?'}` : tool.source === 'a2a agent' ? `A2A agent ${tool.server ?? '?'}` : tool.file ? `${tool.source} ${shownPath(tool.file, base)}${tool.pack ? `, pack ${tool.pack}` : ''}` : tool.source;
      lines.push(`    tool ${tool.name}: ${origin}`);
    }
    if (agent.permissions.deny.length > 0) lines.push(`    denied: ${agent.permissions.deny.join(', ')}`);
    if (agent.permissions.ask.length > 0) lines.push(`    asks before: ${agent.permissions.ask.join(', ')}`);
    if (agent.permissions.allow.length > 0) lines.push(`    allowed: ${agent.permissions.allow.join(', ')}`);
    if (agent.permissions.default !== 'allow') lines.push(`    any other call: ${agent.permissions.default}`);
    if (agent.permissions.onAsk === 'deny') lines.push('    a call that needs approval is refused (on_ask: deny)');
  }
  lines.push('prompt files (sent to the model):', ...(recipe.promptFiles.length === 0 ? ['  none'] : recipe.promptFiles.map((file) => `  ${shownPath(file, cwd)}`)));
  if (recipe.flow) {
    lines.push('flow steps:');
    for (const step of recipe.flow.steps) lines.push(`  ${step.path}: ${step.kind}${step.agent ? `, agent ${step.agent}` : ''}`);
  }
  lines.push(...pluginFolderLines(recipe.pluginFolders, cwd, ''));
  lines.push('mcp servers:', ...(recipe.mcpServers.length === 0 ? ['  none'] : recipe.mcpServers.map((server) => {
    const what = server.transport === 'http' ? `http ${server.url}` : `command: ${server.command!.join(' ')} (in ${shownPath(server.cwd!, cwd)})`;
    return `  ${server.name}: ${what}; ${server.starts ? 'starts with the run' : 'declared, not used by the agents'}; runs ${server.runs}; may ask the run's model for completions only with --trust ${server.samplingNeeds}; declared in ${shownPath(server.declaredIn, cwd)}`;
  })));
  lines.push('checks:', ...(recipe.checks.length === 0 ? ['  none'] : recipe.checks.map((check) => {
    if (check.command !== undefined) return `  ${check.name}: command: ${check.command} (runs ${check.runs})`;
    return `  ${check.name}: ${check.kind}${check.file ? ` ${check.file}` : ''}${check.pattern ? ` /${check.pattern}/` : ''}`;
  })));
  if (recipe.onFailure) lines.push(`on_failure: command: ${recipe.onFailure.command} (runs ${recipe.onFailure.runs}, before each retry)`);
  const sandbox = recipe.sandbox;
  lines.push(
    `sandbox: ${sandbox.kind} (from ${sandbox.declaredBy}): code runs ${sandbox.runs}`,
    `  network ${sandbox.network ? 'on' : recipe.network.allowHosts ? 'named hosts only' : 'off'}; image ${sandbox.image}; memory ${sandbox.memoryMb} MB, ${sandbox.cpus} cpus, ${sandbox.pids} processes; passes ${sandbox.passEnv.join(', ') || 'no environment variables'}`,
    'network:',
    recipe.network.allowHosts
      ? `  only these hosts, for sandboxed code, web tools, the browser and MCP clients alike: ${recipe.network.allowHosts.join(', ')}`
      : `  from the sandbox: ${recipe.network.sandbox ? 'allowed' : 'none'}`,
    ...(recipe.network.only ? [`  every connection held to network.only of your own configuration (the model endpoint aside): ${recipe.network.only.join(', ')}`] : []),
    ...recipe.network.modelEndpoints.map((endpoint) => `  model profile ${endpoint.profile}: ${endpoint.url}`),
    ...recipe.network.mcpUrls.map((url) => `  MCP server: ${url}`),
    ...recipe.network.a2aUrls.map((url) => `  A2A agent: ${url}`),
  );
  if (recipe.trust.length === 0) lines.push('needs your consent: nothing (no --trust grant)');
  else {
    lines.push('needs your consent:', ...recipe.trust.map((request) => `  --trust ${request.grant}: ${request.text}`), `  run with --trust ${recipe.grantsNeeded.join(',')} to allow all of it`);
  }
  if (recipe.diagnostics.length > 0) lines.push('problems:', ...recipe.diagnostics.map((diagnostic) => `  ${diagnostic.location ? `${diagnostic.location}: ` : ''}${diagnostic.severity}: ${diagnostic.message}`));
  return lines;
}

function pluginFolderLines(folders: InspectedPluginFolder[], cwd: string, indent = '  '): string[] {
  const lines = [`${indent}plugin files (loaded by every run, used or not${folders.some((folder) => folder.builtIn) ? '; built-in ones only when used' : ''}):`];
  for (const folder of folders) {
    lines.push(`${indent}  ${folder.builtIn ? 'the built-in plugins of manus-runtime' : shownPath(folder.folder, cwd)}${folder.pack ? ` (pack ${folder.pack})` : ''}`);
    if (folder.plugins.length === 0) lines.push(`${indent}    ${folder.builtIn ? 'none used' : 'none'}`);
    for (const plugin of folder.plugins) {
      if (folder.builtIn) {
        lines.push(`${indent}    ${shownPath(plugin.entry, folder.folder)}: ${plugin.names.join(', ')}`);
        continue;
      }
      for (const file of plugin.files) lines.push(`${indent}    ${shownPath(file.path, folder.folder)}  sha256:${file.sha256}  ${file.bytes} bytes`);
      lines.push(`${indent}      declares: ${plugin.names.join(', ') || 'no name in its source (it may build them when it runs)'}`);
    }
  }
  return lines;
}
