/** `manus resume`: continue a run from its events file, with the same history, workspace and plan. */
import { join } from 'node:path';
import { resolveRecipe } from '../runtime/runs/recipe/resolve-recipe.js';
import { parseTrustGrants } from '../runtime/contract/trust-grants.js';
import { resolveRunId } from '../runtime/runs/run-history.js';
import { runsDirectoryFor } from '../runtime/runs/run-preparation.js';
import { readRunResumption } from '../runtime/runs/run-resumption.js';
import type { ApprovalDecision } from '../runtime/runs/recorded-run.js';
import { UsageError } from '../runtime/contract/errors.js';
import { printPlanWarnings, runWithProgress } from './run-command.js';
import { terminalText } from '../runtime/services/terminal-text.js';

export interface ResumeCommandOptions {
  ci?: boolean;
  trust: string[];
  report?: string;
  maxSteps?: number;
  maxTokens?: number;
  answer: string[];
  approve: string[];
  deny: string[];
  reason?: string;
  runsDir?: string;
  json?: boolean;
  quiet?: boolean;
}

export async function resumeCommand(runId: string, options: ResumeCommandOptions): Promise<number> {
  const trust = [...parseTrustGrants(options.trust)];
  const runsDirectory = runsDirectoryFor(process.cwd(), process.env, options.runsDir);
  const runDirectory = join(runsDirectory, await resolveRunId(runsDirectory, runId));
  const resumption = readRunResumption({
    runDirectory,
    cwd: process.cwd(),
    answers: options.answer,
    approvals: approvalDecisions(options),
    // The grants of the first run are not taken from its events file: the user gives them again.
    overrides: {
      ...(options.maxSteps ? { maxSteps: options.maxSteps } : {}),
      ...(options.maxTokens ? { maxTokens: options.maxTokens } : {}),
      trust,
    },
  });
  for (const warning of resumption.recorded.warnings) process.stderr.write(`warning: ${warning}\n`);
  const plan = await resolveRecipe(resumption.recipeFile, { cwd: process.cwd(), overrides: resumption.overrides });
  printPlanWarnings(plan, options);
  const isFlow = plan.flow !== undefined;
  for (const note of resumption.notes(isFlow)) process.stderr.write(terminalText(`${note}\n`));
  const { answers, ...resume } = resumption.options(isFlow);
  const result = await runWithProgress(plan, { ...options, answer: answers ?? [] }, resume, resumption.label(isFlow));
  return result.exitCode;
}

/** `--approve` and `--deny` as decisions by call id; a call given both is a usage error. */
function approvalDecisions(options: Pick<ResumeCommandOptions, 'approve' | 'deny' | 'reason'>): Map<string, ApprovalDecision> {
  const decisions = new Map<string, ApprovalDecision>();
  for (const id of options.approve ?? []) decisions.set(id, { approved: true });
  for (const id of options.deny ?? []) {
    if (decisions.has(id)) throw new UsageError(`the call ${id} is given to both --approve and --deny`);
    decisions.set(id, { approved: false, ...(options.reason ? { reason: options.reason } : {}) });
  }
  if (options.reason !== undefined && (options.deny ?? []).length === 0) throw new UsageError('--reason goes with --deny <call>');
  return decisions;
}
