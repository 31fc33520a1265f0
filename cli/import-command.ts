/**
 * `manus import openmanus <config.toml> [--mcp <mcp.json>] [--out agents.yaml] [--force]`: writes
 * an agents.yaml from an OpenManus configuration, where the user says, and tells them what to set
 * and what could not come along. No secret value is written or printed: only variable names.
 */
import { randomBytes } from 'node:crypto';
import { realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { ConfigError, formatLocation, UsageError } from '../runtime/contract/errors.js';
import { packageRoot } from '../runtime/config/package-root.js';
import { importOpenManus, shownPath, type ImportFinding, type OpenManusImport } from '../runtime/applications/openmanus-import/import-openmanus.js';
import { terminalText } from '../runtime/services/terminal-text.js';
import { ExitCode } from './exit-codes.js';

export interface ImportCommandOptions {
  mcp?: string;
  out?: string;
  force?: boolean;
}

export async function importOpenManusCommand(configFile: string, options: ImportCommandOptions): Promise<number> {
  const cwd = process.cwd();
  const outputFile = resolve(cwd, options.out ?? 'agents.yaml');
  if (sameFile(outputFile, join(packageRoot, 'agents.yaml'))) {
    throw new UsageError(`${outputFile} is the runtime's own agents.yaml; write the import into your project with --out, or run the command there`);
  }
  const imported = await importOpenManus({
    configFile: resolve(cwd, configFile),
    mcpFile: options.mcp === undefined ? undefined : resolve(cwd, options.mcp),
    outputFile,
  });
  writeAgentsFile(outputFile, imported.text, options.force === true);
  // A stdio server of a project's agents file runs in the sandbox; OpenManus ran it on the host, which takes --trust mcp.
  const grants = [...await grantsNeeded(outputFile, cwd), ...(imported.stdioServers.length > 0 ? ['mcp'] : [])];
  process.stdout.write(terminalText(importSummary(imported, shownPath(outputFile, cwd), cwd, grants)));
  return ExitCode.success;
}

/**
 * The grants a run with the written file needs, as `manus validate` finds them: the file is the
 * user's, but it sits where a project's agents.yaml does, and such a file only asks.
 */
async function grantsNeeded(file: string, cwd: string): Promise<string[]> {
  const { validateFiles } = await import('../runtime/runs/validate.js');
  const diagnostics = await validateFiles([file], cwd);
  const errors = diagnostics.filter((diagnostic) => diagnostic.severity === 'error');
  if (errors.length > 0) throw new ConfigError(errors);
  const grants = diagnostics.map((diagnostic) => /a run needs --trust (\w+)$/.exec(diagnostic.message)?.[1]).filter((grant): grant is string => grant !== undefined);
  return [...new Set(grants)];
}

function sameFile(first: string, second: string): boolean {
  try {
    return realpathSync(first) === realpathSync(second);
  } catch {
    return false;
  }
}

/**
 * Creates the file, refusing one that exists; with `force`, replaces it through a new file renamed
 * over it, so a link at that path is replaced rather than followed and a reader never sees half a file.
 */
function writeAgentsFile(file: string, text: string, force: boolean): void {
  if (!force) {
    try {
      writeFileSync(file, text, { flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new UsageError(`${file} already exists; choose another file with --out, or replace it with --force`);
      throw missingFolder(error, file);
    }
    return;
  }
  const temporary = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(temporary, text, { flag: 'wx' });
  } catch (error) {
    throw missingFolder(error, file);
  }
  try {
    renameSync(temporary, file);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** A folder that is not there is the user's to make: a usage error, not a failure of the command. */
function missingFolder(error: unknown, file: string): unknown {
  return (error as NodeJS.ErrnoException).code === 'ENOENT' ? new UsageError(`the folder ${dirname(file)} does not exist; make it first, or choose another --out`) : error;
}

function importSummary(imported: OpenManusImport, shownFile: string, cwd: string, grants: string[]): string {
  const { report } = imported;
  const lines = [`wrote ${shownFile}: ${counted(imported.profiles, 'model profile')}${listed(imported.profiles)}, ${counted(imported.agents, 'agent')}${listed(imported.agents)}, ${counted(imported.mcpServers, 'MCP server')}${listed(imported.mcpServers)}`];
  if (report.variables.length > 0) {
    lines.push('', 'Set these variables before a run; the keys were not copied into the file:');
    const width = Math.max(...report.variables.map((variable) => variable.name.length));
    for (const variable of report.variables) {
      const hint = variable.hint ? `; ${variable.hint}` : '';
      lines.push(`  ${variable.name.padEnd(width)}  the value of ${variable.settings.join(', ')}${hint}`);
    }
  }
  if (report.notes.length > 0) lines.push('', 'Imported with a change:', ...report.notes.map((finding) => findingLine(finding, cwd)));
  if (report.unmapped.length > 0) lines.push('', 'Not imported:', ...report.unmapped.map((finding) => findingLine(finding, cwd)));
  const trust = grants.length > 0 ? ` --trust ${grants.join(',')}` : '';
  lines.push('');
  if (grants.length > 0) lines.push(`Runs with it need${trust}: manus validate ${shownFile} says which setting asks for what.`);
  if (imported.stdioServers.length > 0) {
    lines.push(`With --trust mcp the servers ${imported.stdioServers.join(', ')} start on the host, as in OpenManus; without it, in the sandbox.`);
  }
  lines.push(basename(shownFile) === 'agents.yaml'
    ? `Runs started in ${dirname(shownFile) === '.' ? 'this folder' : dirname(shownFile)}, or of a recipe beside the file, use it: manus run <recipe.yaml>${trust}`
    : 'Runs read agents.yaml from the current folder and beside the recipe: rename or move the file there to use it.');
  return `${lines.join('\n')}\n`;
}

function findingLine(finding: ImportFinding, cwd: string): string {
  const location = formatLocation({ ...finding.location, file: shownPath(finding.location.file, cwd) });
  return `  ${location}: ${finding.setting}: ${finding.message}`;
}

function counted(items: readonly string[], noun: string): string {
  return `${items.length} ${noun}${items.length === 1 ? '' : 's'}`;
}

function listed(items: readonly string[]): string {
  return items.length > 0 ? ` (${items.join(', ')})` : '';
}
