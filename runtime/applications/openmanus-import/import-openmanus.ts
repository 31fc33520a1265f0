/**
 * `manus import openmanus`: OpenManus's config.toml (and mcp.json) as an agents.yaml. The text is
 * loaded with the runtime's own agents loader before anyone writes it, so what the user gets is a
 * file every run accepts. Secrets are never copied: the file names the variables that hold them.
 */
import { dirname, isAbsolute, join, relative } from 'node:path';
import { Document } from 'yaml';
import { ConfigError } from '../../contract/errors.js';
import { packageRoot } from '../../config/package-root.js';
import type { AgentYaml, AgentsYaml } from '../../config/schema-types.generated.js';
import { parseYamlText, readYamlFile } from '../../config/yaml-source.js';
import { emptyAgentsConfig, loadAgentsSource } from '../../runs/recipe/load-agents.js';
import { importAgentSettings, type ImportedAgentSettings } from './agent-settings.js';
import { ImportReport } from './import-findings.js';
import { importMcpServers } from './mcp-servers.js';
import { importModelProfiles } from './model-profiles.js';
import { readOpenManusConfig, readOpenManusMcpJson } from './openmanus-files.js';

export { ImportReport, type ImportFinding, type KeyVariable } from './import-findings.js';

export interface OpenManusImportInput {
  configFile: string;
  mcpFile?: string;
  /** Where the agents file will be written: relative paths in it are relative to its folder. */
  outputFile: string;
}

export interface OpenManusImport {
  text: string;
  report: ImportReport;
  profiles: string[];
  agents: string[];
  mcpServers: string[];
  /** The servers started from a command, which `--trust mcp` starts on the host as OpenManus did. */
  stdioServers: string[];
}

/** The tools whose settings OpenManus's sections give, and the tools that run code in the sandbox. */
const codeTools = ['python_execute', 'bash'];

export async function importOpenManus(input: OpenManusImportInput): Promise<OpenManusImport> {
  const report = new ImportReport();
  const source = await readOpenManusConfig(input.configFile);
  const outputFolder = dirname(input.outputFile);
  const { profiles, comments } = importModelProfiles(source, report);
  const settings = importAgentSettings(source, report);
  const servers = input.mcpFile ? importMcpServers(readOpenManusMcpJson(input.mcpFile), outputFolder, report).servers : {};
  const agents = agentsWithSettings(settings, {
    mcpServers: Object.keys(servers),
    visionProfile: profiles.vision ? 'vision' : undefined,
  });

  const data: AgentsYaml = { version: 1 };
  if (Object.keys(profiles).length > 0) data.llm = profiles;
  if (Object.keys(agents).length > 0) data.agents = agents;
  if (Object.keys(servers).length > 0) data.mcp_servers = servers;
  // Agents that share a sandbox each spell it out: anchors and aliases would puzzle the file's reader.
  const document = new Document(data, { aliasDuplicateObjects: false });
  document.commentBefore = headerComment(input, outputFolder, Object.keys(agents).length > 0);
  for (const [name, comment] of Object.entries(comments)) commentAbove(document, ['llm', name], comment);
  const text = document.toString({ lineWidth: 0 });

  // The runtime's own loader is the judge: an import that it would refuse is a bug, not a file to write.
  const parsed = parseYamlText(input.outputFile, text);
  const problems = parsed.source ? loadAgentsSource(parsed.source, emptyAgentsConfig()) : parsed.diagnostics;
  const errors = problems.filter((problem) => problem.severity === 'error');
  if (errors.length > 0) throw new ConfigError(errors);
  const stdioServers = Object.keys(servers).filter((name) => servers[name]!.command !== undefined);
  return { text, report, profiles: Object.keys(profiles), agents: Object.keys(agents), mcpServers: Object.keys(servers), stdioServers };
}

/**
 * The runtime's own agents that OpenManus's settings concern, each copied whole with the settings
 * added: an agent in another agents file replaces the one of the same name, it does not extend it.
 */
function agentsWithSettings(settings: ImportedAgentSettings, extra: { mcpServers: string[]; visionProfile?: string }): Record<string, AgentYaml> {
  const packageAgents = (readYamlFile(join(packageRoot, 'agents.yaml')).source?.data as AgentsYaml | undefined)?.agents ?? {};
  const result: Record<string, AgentYaml> = {};
  for (const [name, agent] of Object.entries(packageAgents)) {
    const tools = agent.tools ?? [];
    const copy: AgentYaml = structuredClone(agent);
    let changed = false;
    for (const [tool, toolSettings] of Object.entries(settings.toolSettings)) {
      if (!tools.includes(tool)) continue;
      copy.tool_settings = { ...copy.tool_settings, [tool]: { ...copy.tool_settings?.[tool], ...toolSettings } };
      changed = true;
    }
    if (settings.sandbox && tools.some((tool) => codeTools.includes(tool))) {
      copy.sandbox = settings.sandbox;
      changed = true;
    }
    // OpenManus's Manus agent offers every tool of every server in mcp.json.
    if (name === 'manus' && extra.mcpServers.length > 0) {
      copy.tools = [...tools, ...extra.mcpServers.map((server) => `mcp_${server}_*`)];
      changed = true;
    }
    // Browsing is where screenshots are: the browser agent looks at pages with the vision model.
    if (name === 'browser' && extra.visionProfile) {
      copy.llm = extra.visionProfile;
      changed = true;
    }
    if (changed) result[name] = copy;
  }
  return result;
}

function headerComment(input: OpenManusImportInput, outputFolder: string, withAgents: boolean): string {
  const shown = (file: string) => shownPath(file, outputFolder);
  const lines = [
    ` Imported from OpenManus's ${shown(input.configFile)}${input.mcpFile ? ` and ${shown(input.mcpFile)}` : ''} by \`manus import openmanus\`.`,
    ' API keys are not in this file: each profile names, in api_key_env, the variable that holds its key.',
  ];
  if (withAgents) lines.push(' The agents are the runtime\'s own, copied with the OpenManus settings added: they replace those of the same name.');
  return lines.join('\n');
}

/** A path relative to `folder` when it lies inside it, else the absolute path. */
export function shownPath(file: string, folder: string): string {
  const path = relative(folder, file);
  return path === '' || path.startsWith('..') || isAbsolute(path) ? file : path;
}

function commentAbove(document: Document, path: string[], comment: string): void {
  const parent = document.getIn(path.slice(0, -1), true) as { items?: Array<{ key: unknown }> } | undefined;
  const pair = parent?.items?.find((item) => (item.key as { value?: unknown })?.value === path.at(-1));
  if (pair) (pair.key as { commentBefore?: string }).commentBefore = ` ${comment}`;
}
