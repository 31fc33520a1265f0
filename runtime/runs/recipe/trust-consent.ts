/**
 * Before a run starts, every loosening its recipe asks for must be granted by the user: with
 * `--trust`, in their own configuration, or by a yes at the terminal when there is one. Otherwise
 * the run stops with exit 5 before any model call, saying which `--trust` would allow it.
 */
import { PermissionDeniedError } from '../../contract/errors.js';
import { askOnTerminal, isYes } from '../../services/human-channel.js';
import { describeTrustRequest, grantsNeeded, ungrantedRequests, type TrustRequest } from './recipe-requests.js';
import type { RunPlan } from './resolve-recipe.js';
import { userConfigFile } from './user-config.js';

export interface TrustConsentOptions {
  /** A person at a terminal can be asked (not CI, stdin is a terminal). */
  interactive: boolean;
  environment: Record<string, string | undefined>;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

/** Grants what the plan asks for once the user agrees, or throws PermissionDeniedError. */
export async function settleTrustRequests(plan: RunPlan, options: TrustConsentOptions): Promise<void> {
  const ungranted = ungrantedRequests(plan.trustRequests, plan.trustGrants);
  if (ungranted.length === 0) return;
  const grants = grantsNeeded(ungranted);
  const rerun = `rerun with --trust ${grants.join(',')}`;
  if (!options.interactive) {
    const file = userConfigFile(options.environment);
    const config = file ? ` (or list them under trust: in ${file})` : '';
    throw new PermissionDeniedError(
      `the recipe asks for what only you can grant, and no one can be asked (the run is not interactive):\n${listed(ungranted)}\n${rerun} to allow it${config}`,
    );
  }
  const question = ungranted.length === 1
    ? `The recipe asks to: ${describeTrustRequest(ungranted[0])}. Allow? [y/N]`
    : `The recipe asks to:\n${listed(ungranted)}\nAllow? [y/N]`;
  const answer = await askOnTerminal(question, options).catch(() => '');
  if (!isYes(answer)) throw new PermissionDeniedError(`not allowed:\n${listed(ungranted)}\n${rerun} to allow it`);
  plan.trustGrants = new Set([...plan.trustGrants, ...grants]);
}

/** The last line of defence: a plan with an ungranted request never runs, whoever calls it. */
export function assertTrustGranted(plan: RunPlan): void {
  const ungranted = ungrantedRequests(plan.trustRequests, plan.trustGrants);
  if (ungranted.length === 0) return;
  throw new PermissionDeniedError(`the recipe asks for what was not granted:\n${listed(ungranted)}\nrerun with --trust ${grantsNeeded(ungranted).join(',')} to allow it`);
}

function listed(requests: readonly TrustRequest[]): string {
  return requests.map((request) => `  - ${describeTrustRequest(request)}`).join('\n');
}
