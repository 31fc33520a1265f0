/** `manus packs`: the packs installed here, with their recipes, agents and tools, read without running any of them. */
import { existsSync } from 'node:fs';
import { formatDiagnostic, type Diagnostic } from '../runtime/contract/errors.js';
import { emptyAgentsConfig, loadAgentsFile } from '../runtime/runs/recipe/load-agents.js';
import { loadRecipeFile } from '../runtime/runs/recipe/load-recipe.js';
import { installedPacks, packRecipes } from '../runtime/features/packs/installed-packs.js';
import { scanPluginFolder, shownPath } from '../runtime/kernel/plugin-loading/plugin-scan.js';
import { ExitCode } from './exit-codes.js';

interface PackListing {
  name: string;
  version?: string;
  description?: string;
  folder: string;
  recipes: Array<{ name: string; run: string; description?: string; file: string }>;
  agents: string[];
  tools: string[];
}

export function packsCommand(options: { json?: boolean }): number {
  const cwd = process.cwd();
  const diagnostics: Diagnostic[] = [];
  const listings: PackListing[] = installedPacks(cwd).map((pack) => {
    const agents = emptyAgentsConfig();
    if (existsSync(pack.agentsFile)) diagnostics.push(...loadAgentsFile(pack.agentsFile, agents));
    return {
      name: pack.name,
      version: pack.version,
      description: pack.description,
      folder: pack.folder,
      recipes: packRecipes(pack).map((recipe) => {
        const loaded = loadRecipeFile(recipe.file);
        diagnostics.push(...loaded.diagnostics.filter((diagnostic) => diagnostic.severity === 'error'));
        return { name: recipe.name, run: `${pack.name}/${recipe.name}`, description: loaded.recipe?.description, file: recipe.file };
      }),
      agents: [...agents.agents.keys()],
      tools: existsSync(pack.pluginsFolder) ? [...new Set(scanPluginFolder(pack.pluginsFolder).flatMap((plugin) => plugin.names))] : [],
    };
  });
  for (const diagnostic of diagnostics) process.stderr.write(`${formatDiagnostic(diagnostic)}\n`);
  if (options.json) {
    process.stdout.write(`${JSON.stringify(listings, null, 2)}\n`);
  } else if (listings.length === 0) {
    process.stderr.write('no packs are installed here (a pack is an npm package with a "manus" field; npm install one, or make one with manus pack init <name>)\n');
  } else {
    for (const pack of listings) {
      const lines = [
        `${pack.name}${pack.version ? ` ${pack.version}` : ''}${pack.description ? `: ${pack.description}` : ''}`,
        `  folder: ${shownPath(pack.folder, cwd)}`,
        ...pack.recipes.map((recipe) => `  recipe ${recipe.run}${recipe.description ? `: ${recipe.description}` : ''}`),
        `  agents: ${pack.agents.join(', ') || 'none'}`,
        `  tools: ${pack.tools.join(', ') || 'none'}`,
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    }
  }
  return diagnostics.some((diagnostic) => diagnostic.severity === 'error') ? ExitCode.usage : ExitCode.success;
}
