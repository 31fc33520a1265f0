/** `manus replay`: re-run a recording with the model's recorded replies and report where it diverges. */
import { redactorForPlan } from '../runtime/runs/plan-secrets.js';
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { resolveRecipe, type RecipeOverrides, type RunPlan } from '../runtime/runs/recipe/resolve-recipe.js';
import { parseTrustGrants, type TrustGrant } from '../runtime/contract/trust-grants.js';
import { UsageError } from '../runtime/contract/errors.js';
import { readRecordedRun, type RecordedRun } from '../runtime/runs/recorded-run.js';
import { resolveRunId } from '../runtime/runs/run-history.js';
import { comparingWithRecording, DivergenceLog, planFromRecording, RecordedModel, recordedTools, type ReplayToolMode } from '../runtime/runs/replay.js';
import { packageRoot } from '../runtime/config/package-root.js';
import { loadPluginFolders } from '../runtime/kernel/plugin-loading/load-plugins.js';
import { runsDirectoryFor } from '../runtime/runs/run-preparation.js';
import { ExitCode } from './exit-codes.js';
import { runWithProgress } from './run-command.js';
import { terminalText } from '../runtime/services/terminal-text.js';

export interface ReplayCommandOptions {
  ci?: boolean;
  trust: string[];
  report?: string;
  tools: string;
  workspace?: string;
  runsDir?: string;
  json?: boolean;
  quiet?: boolean;
}

export async function replayCommand(target: string, options: ReplayCommandOptions): Promise<number> {
  const mode = options.tools as ReplayToolMode;
  if (mode !== 'recorded' && mode !== 'real') throw new UsageError(`--tools must be recorded or real, not '${options.tools}'`);
  const trust = [...parseTrustGrants(options.trust)];
  const recorded = readRecordedRun(await eventsFileFor(target, options));
  for (const warning of recorded.warnings) process.stderr.write(`warning: ${warning}\n`);
  const divergences = new DivergenceLog();
  const plan = mode === 'real' ? await realToolsPlan(recorded, trust) : await recordedToolsPlan(recorded, divergences);
  plan.workspace = options.workspace;
  const result = await runWithProgress(plan, { ...options, answer: [] }, {
    workspaceSource: mode === 'real' ? workspaceSourceOf(recorded) : undefined,
    model: new RecordedModel(recorded, divergences),
    wrapTool: mode === 'real' ? comparingWithRecording(recorded, divergences) : undefined,
    startDetails: { replayOf: recorded.start.runId, replayTools: mode, model: recordedModel(recorded) },
  }, `replay of recorded model replies from run ${String(recorded.start.runId)} (tools: ${mode}); no model is called`);
  const recordedStatus = recorded.end?.status;
  if (recordedStatus && recordedStatus !== result.status) {
    divergences.note({ step: result.steps, what: `the replay ended '${result.status}', the recording '${recordedStatus}'` });
  }
  if (!divergences.first) {
    process.stderr.write(`replay matched the recording (${result.steps} steps)\n`);
    return result.exitCode;
  }
  const first = divergences.first;
  // A real tool's result is compared before the run redacts it.
  const redactor = redactorForPlan(plan, process.env);
  process.stderr.write(terminalText(`replay diverged from the recording at step ${first.step}: ${first.what}\n`));
  if (first.recorded !== undefined) {
    process.stderr.write(terminalText(`  recorded: ${oneLine(redactor.redact(first.recorded))}\n  actual:   ${oneLine(redactor.redact(first.actual ?? ''))}\n`));
  }
  return ExitCode.taskFailed;
}

async function eventsFileFor(target: string, options: ReplayCommandOptions): Promise<string> {
  const asPath = resolve(target);
  if (existsSync(asPath)) return statSync(asPath).isDirectory() ? join(asPath, 'events.jsonl') : asPath;
  const runsDirectory = runsDirectoryFor(process.cwd(), process.env, options.runsDir);
  return join(runsDirectory, await resolveRunId(runsDirectory, target), 'events.jsonl');
}

async function recordedToolsPlan(recorded: RecordedRun, divergences: DivergenceLog): Promise<RunPlan> {
  // A flow's steps are in its recipe, not in the recording: the recipe is read, its tools replaced by recorded results.
  // Nothing real runs, so nothing needs the user's grants and no MCP server starts.
  const plan = recorded.start.flow
    ? { ...planFromRecording(recorded, await recordedRecipePlan(recorded, [])), mcpServers: [], trustRequests: [] }
    : planFromRecording(recorded);
  // MCP servers' tools joined the run after it started; their names are in the servers' events.
  const serverTools = recorded.events.filter((event) => event.type === 'mcp-server-ready' || event.type === 'mcp-tools-changed').flatMap((event) => (event.tools as string[] | undefined) ?? []);
  const toolNames = [...new Set([...((recorded.start.tools as string[] | undefined) ?? []), ...serverTools, ...plan.tools.keys()])];
  // Built-in tools that declare themselves replay-safe run for real even when other results are recorded.
  const builtIn = await loadPluginFolders([{ path: join(packageRoot, 'plugins') }]);
  const available = new Map([...builtIn.tools].map(([name, loaded]) => [name, loaded.tool]));
  plan.tools = recordedTools(recorded, toolNames, divergences, available);
  return plan;
}

/**
 * Real tools need the recipe: where it was recorded, beside the recording, or in a folder above the
 * recording when the recording travelled with its project (as the shipped ones do).
 */
async function realToolsPlan(recorded: RecordedRun, trust: TrustGrant[]): Promise<RunPlan> {
  return planFromRecording(recorded, await recordedRecipePlan(recorded, trust, 'real'));
}

/** The recorded run's recipe, resolved again as it was recorded. */
async function recordedRecipePlan(recorded: RecordedRun, trust: TrustGrant[], mode: ReplayToolMode = 'recorded'): Promise<RunPlan> {
  const recipe = recorded.start.recipe as { file: string; overrides?: RecipeOverrides };
  const file = findRecordedPath(recipe.file, recorded, [join(dirname(recorded.file), basename(recipe.file))]);
  if (!file) {
    throw new UsageError(mode === 'real'
      ? `--tools real needs the recipe, and ${recipe.file} is not there; use --tools recorded`
      : `a flow is replayed with its recipe, and ${recipe.file} is not there`);
  }
  // Real tools run with the recipe's sandbox: the grants it needs are given again, never read from the recording.
  return resolveRecipe(file, { cwd: process.cwd(), overrides: { ...recipe.overrides, trust } });
}

/** The folder the recorded run's workspace was copied from, found again so the replay starts from the same files. */
function workspaceSourceOf(recorded: RecordedRun): string | undefined {
  const source = recorded.start.workspaceSource;
  if (typeof source !== 'string') return undefined;
  // A recording may come from anyone: it may name a folder of its own project, never one elsewhere on this machine.
  if (isAbsolute(source) || source.split(/[\\/]/).includes('..')) {
    throw new UsageError(`the recording starts its workspace as a copy of ${source}, which lies outside its project; prepare a folder yourself and pass --workspace`);
  }
  const found = findRecordedPath(source, recorded);
  if (!found) throw new UsageError(`--tools real starts the workspace as a copy of ${source}, as the recording did, and ${source} is not there`);
  return found;
}

/** A path recorded relative to the recording run's folder: from here, or from a folder above the recording. */
function findRecordedPath(recordedPath: string, recorded: RecordedRun, extra: string[] = []): string | undefined {
  if (isAbsolute(recordedPath)) return existsSync(recordedPath) ? recordedPath : undefined;
  const candidates = [resolve(recordedPath), ...extra];
  for (let folder = dirname(resolve(recorded.file)); ; folder = dirname(folder)) {
    candidates.push(join(folder, recordedPath));
    if (dirname(folder) === folder) break;
  }
  return candidates.find((candidate) => existsSync(candidate));
}

/** The model the recording was made with, as far as it says; no model is called. */
function recordedModel(recorded: RecordedRun): Record<string, unknown> {
  const model = (recorded.start.model ?? {}) as { profile?: unknown; model?: unknown };
  return {
    profile: typeof model.profile === 'string' ? model.profile : 'recorded',
    provider: 'recorded',
    model: typeof model.model === 'string' ? model.model : 'recorded',
  };
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 200 ? `${flat.slice(0, 197)}...` : flat;
}
