/**
 * One run of a resolved plan: prepared (its id, folder, workspace, trace and model), attempted (the
 * loop and the recipe's checks), and finished with a result that says exactly how it ended.
 * Resources are released however it ends.
 */
import type { RunPlan } from './recipe/resolve-recipe.js';
import { assertTrustGranted } from './recipe/trust-consent.js';
import { ConfigError, type ManusError } from '../contract/errors.js';
import { missingEnvironment } from '../services/model/model-connection.js';
import { mcpServicesFor, startMcpServers } from './run-mcp-servers.js';
import { attemptTask } from './run-attempt.js';
import { attemptFlow } from './flow/flow-attempt.js';
import { connectModel, prepareRun, recordRunStart, runToolbox } from './run-preparation.js';
import type { RunModel, RunOptions, RunResult, TaskAttempts } from './run-types.js';
import { asManusError, finishRun } from './run-result.js';

export type { RunStatus } from './run-status.js';
export type { RunOptions, RunResult } from './run-types.js';

/** Fails before anything starts when variables the configuration names are missing, listing them all. */
export function checkEnvironment(plan: RunPlan, environment: Record<string, string | undefined>): void {
  const missing = missingEnvironment(plan.profile, environment);
  if (missing.length === 0) return;
  throw new ConfigError([{
    severity: 'error',
    message: `model profile '${plan.profile.name}' needs environment variables that are not set: ${missing.join(', ')}`,
    location: plan.profile.location,
  }]);
}

export async function executeRun(plan: RunPlan, options: RunOptions): Promise<RunResult> {
  assertTrustGranted(plan);
  if (!options.model) checkEnvironment(plan, options.environment);
  const run = prepareRun(plan, options);
  let model: RunModel | undefined;
  let attempts: TaskAttempts | undefined;
  let failure: ManusError | undefined;
  try {
    model = await connectModel(plan, options, run);
    const toolbox = runToolbox(plan, options);
    recordRunStart(run, plan, options, model, toolbox);
    await startMcpServers(plan, mcpServicesFor(run, options, model.model, toolbox.tools));
    attempts = plan.flow ? await attemptFlow(run, { ...plan, flow: plan.flow }, options, model, toolbox) : await attemptTask(run, plan, options, model, toolbox);
  } catch (error) {
    failure = asManusError(error);
  }
  return finishRun(run, plan, options, { attempts, failure, model });
}
