/** A flow's work on the task: its steps, then the recipe's checks, like an agent's attempt. */
import { attemptWithChecks } from '../../features/checks/check-attempts.js';
import type { RunPlan } from '../../config/run-plan.js';
import type { PreparedRun, RunModel, RunOptions, RunToolbox, TaskAttempts } from '../run-types.js';
import { sandboxForRun } from '../../services/sandbox/run-sandbox.js';
import type { FlowPlan } from '../../config/flow-plan.js';
import { runFlow } from './run-flow.js';

export async function attemptFlow(run: PreparedRun, plan: RunPlan & { flow: FlowPlan }, options: RunOptions, model: RunModel, toolbox: RunToolbox): Promise<TaskAttempts> {
  const attempts = attemptWithChecks({
    checks: plan.recipe.checks,
    // A flow is not retried as a whole: its steps decide what a failure means.
    retry: { maxAttempts: 1 },
    trace: run.trace,
    checkInput: {
      workspace: run.workspace,
      signal: options.signal,
      sandbox: async () => {
        await run.protectedPaths.ready();
        return sandboxForRun(run);
      },
    },
    attempt: () => runFlow({ run, plan, options, model, toolbox, resume: options.resume?.flow }),
  });
  return Promise.race([run.faults.fatal, attempts]);
}
