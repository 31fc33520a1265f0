/**
 * `manus mcp list [recipe]`: starts the MCP servers the agents files, the user's config and the
 * recipe declare, as a run would start them, and prints each server's tools with their schemas.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentsFilesFor, loadAgentsConfig } from '../runtime/runs/recipe/resolve-recipe.js';
import { loadRecipeFile } from '../runtime/runs/recipe/load-recipe.js';
import { locateRecipe } from '../runtime/features/packs/locate-recipe.js';
import { addPackAgents, packsOfRecipe } from '../runtime/runs/recipe/recipe-packs.js';
import { packOfFile } from '../runtime/features/packs/installed-packs.js';
import { parseTrustGrants } from '../runtime/contract/trust-grants.js';
import { loadUserConfig } from '../runtime/runs/recipe/user-config.js';
import { ConfigError, formatDiagnostic } from '../runtime/contract/errors.js';
import { ExitCode } from './exit-codes.js';
import { createHumanChannel } from '../runtime/services/human-channel.js';
import { mergeMcpServers } from '../runtime/features/mcp/server-config.js';
import { serverPrefix } from '../runtime/features/mcp/tool-names.js';
import { UsageLedger } from '../runtime/services/model/usage-ledger.js';
import { RunResourceRegistry } from '../runtime/services/run-resources.js';
import { createSandbox, probeBwrap } from '../runtime/services/sandbox/create-sandbox.js';
import { Toolbox } from '../runtime/kernel/toolbox.js';
import { parameterLines, wrapText } from './parameter-listing.js';
import { terminalText } from '../runtime/services/terminal-text.js';

interface ServerListing {
  server: string;
  place?: string;
  error?: string;
  tools: Array<{ name: string; description: string; parameters: Record<string, unknown> }>;
}

export async function listMcpServers(recipeFile: string | undefined, options: { json?: boolean; trust: string[] }): Promise<number> {
  const cwd = process.cwd();
  const recipePath = recipeFile === undefined ? undefined : locateRecipe(recipeFile, cwd).file;
  const agents = loadAgentsConfig(agentsFilesFor(recipePath, cwd));
  const user = loadUserConfig(process.env);
  const recipe = recipePath ? loadRecipeFile(recipePath) : { recipe: undefined, diagnostics: [] };
  const diagnostics = [...agents.diagnostics, ...user.diagnostics, ...recipe.diagnostics];
  if (recipe.recipe) {
    const own = packOfFile(recipe.recipe.file);
    addPackAgents(agents.config, packsOfRecipe(recipe.recipe, cwd, diagnostics, own), diagnostics, own);
  }
  if (diagnostics.some((diagnostic) => diagnostic.severity === 'error')) throw new ConfigError(diagnostics);
  for (const diagnostic of diagnostics) process.stderr.write(terminalText(`${formatDiagnostic(diagnostic)}\n`));
  const servers = mergeMcpServers(agents.config.mcpServers, user.config.mcpServers, recipe.recipe?.mcpServers ?? []);

  const listings = new Map<string, ServerListing>(servers.map((server) => [server.name, { server: server.name, tools: [] }]));
  const toolbox = new Toolbox();
  const resources = new RunResourceRegistry();
  const workspace = await mkdtemp(join(tmpdir(), 'manus-mcp-list-'));
  const grants = new Set([...parseTrustGrants(options.trust), ...user.config.trust]);
  try {
    const { startRunServers } = await import('../runtime/features/mcp/run-servers.js');
    await startRunServers(servers.map((server) => ({ ...server, required: false })), servers.map((server) => `${serverPrefix(server.name)}*`), {
      toolbox,
      resources,
      trace: {
        emit: (type, data) => {
          const listing = listings.get(String(data.server));
          if (!listing) return;
          if (type === 'mcp-server-ready') listing.place = String(data.place);
          if (type === 'mcp-server-failed') listing.error = String(data.reason);
        },
      },
      model: { complete: () => Promise.reject(new Error('no model while listing')) },
      human: createHumanChannel({ interactive: false, answers: [], recipeAnswers: {} }),
      signal: new AbortController().signal,
      usage: new UsageLedger(),
      networkAccess: user.config.network,
      agent: { name: 'mcp list', toolLocations: {} },
      trustGrants: grants,
      hostChosenByUser: false,
      environment: process.env,
      workspace,
      runSandbox: async () => {
        const bwrap = await probeBwrap();
        if (!bwrap.usable) throw new Error(`it is declared by a recipe or project and bubblewrap is not usable here (${bwrap.reason}); list it with --trust mcp to start it on the host`);
        return resources.get('sandbox', () => createSandbox({ kind: 'bwrap', network: false, options: {}, workspace, runDirectory: workspace, runId: 'mcp-list' }), (sandbox) => sandbox.dispose());
      },
      hostSandbox: () => resources.get('host', () => createSandbox({ kind: 'host', network: true, options: {}, workspace, runDirectory: workspace, runId: 'mcp-list' }), (sandbox) => sandbox.dispose()),
      failRun: () => undefined,
    });
    for (const listing of listings.values()) {
      const prefix = serverPrefix(listing.server);
      listing.tools = [...toolbox.values()]
        .filter((tool) => tool.name.startsWith(prefix))
        .map((tool) => ({ name: tool.name, description: tool.description, parameters: tool.parameters }));
    }
  } finally {
    await resources.disposeAll();
    await rm(workspace, { recursive: true, force: true });
  }
  const all = [...listings.values()];
  if (options.json) process.stdout.write(`${JSON.stringify(all, null, 2)}\n`);
  else if (all.length === 0) process.stdout.write('no MCP servers are declared\n');
  // Servers' names and descriptions are theirs to choose: shown terminal-safe.
  else for (const listing of all) process.stdout.write(terminalText(`${describe(listing)}\n`));
  return all.some((listing) => listing.error) ? ExitCode.toolSourceFailed : ExitCode.success;
}

function describe(listing: ServerListing): string {
  if (listing.error) return `${listing.server}: could not be started: ${listing.error}`;
  const lines = [`${listing.server} (${listing.place}): ${listing.tools.length} tool(s)`];
  for (const tool of listing.tools) {
    lines.push(`  ${tool.name}`, ...wrapText(tool.description.split('\n')[0], '    ', '    '), ...parameterLines(tool.parameters, '      '));
  }
  return lines.join('\n');
}
