/**
 * The sandbox a run uses: the one it asks for, with `auto` resolved when a tool first needs it.
 * The choice is recorded with its reason; Docker containers that killed runs left behind are
 * removed before Docker is used again, and a host sandbox comes with warnings about what it does
 * not contain.
 */
import { sandboxDefaults } from '../../config/defaults.js';
import type { RunPlan } from '../../config/run-plan.js';
import type { SandboxSettings, TraceWriter } from '../../contract/tool.js';
import type { HostConsent, SandboxChoice } from './auto-sandbox.js';

/** What of a run's plan says which sandbox it wants. */
type SandboxWish = Pick<RunPlan, 'sandbox' | 'overrides'>;

/** The sandbox the run asks for: the user's `--sandbox` over the recipe's and the agent's, `auto` by default. */
export function requestedSandbox(plan: SandboxWish): SandboxSettings {
  const configured = plan.sandbox ?? { kind: sandboxDefaults.kind, network: sandboxDefaults.network, options: {} };
  return plan.overrides.sandbox ? { ...configured, kind: plan.overrides.sandbox } : configured;
}

/** Resolves `auto`, records the choice and why, and prepares the chosen kind for the run. */
export async function chooseRunSandbox(plan: SandboxWish, consent: HostConsent, trace: TraceWriter): Promise<SandboxSettings> {
  const requested = requestedSandbox(plan);
  let choice: SandboxChoice;
  if (requested.kind === 'auto') {
    // Loaded only here, so runs that execute no code never load the probes.
    const { chooseAutoSandbox } = await import('./auto-sandbox.js');
    choice = await chooseAutoSandbox(requested, consent);
  } else {
    choice = { settings: requested, reason: plan.overrides.sandbox ? `chosen with --sandbox ${plan.overrides.sandbox}` : 'configured' };
  }
  const { settings } = choice;
  if (settings.kind === 'docker') await removeLeftoverContainers(trace);
  const containment = settings.kind === 'host' ? await warnAboutHost(choice.reason, trace) : {};
  trace.emit('sandbox-selected', { requested: requested.kind, kind: settings.kind, reason: choice.reason, ...containment });
  return settings;
}

/** Containers of runs whose runtime was killed; a daemon that does not answer has none to remove. */
async function removeLeftoverContainers(trace: TraceWriter): Promise<void> {
  const { cleanupLeftoverContainers } = await import('./docker-ownership.js');
  const removed = await cleanupLeftoverContainers().catch(() => []);
  if (removed.length > 0) trace.emit('sandbox-cleanup', { removedContainers: removed });
}

/** Warns that code runs without isolation, and what of the host's own containment is missing. */
async function warnAboutHost(reason: string, trace: TraceWriter): Promise<Record<string, unknown>> {
  const { probeHostContainment } = await import('./host-containment.js');
  const found = await probeHostContainment();
  trace.emit('run-warning', { message: `code runs on the host without isolation (${reason}).` });
  for (const gap of found.gaps) trace.emit('run-warning', { message: `${gap}.` });
  return { containment: { pidNamespace: found.namespace !== undefined, dieWithRuntime: found.parentDeathSignal, cgroup: found.cgroups !== undefined } };
}
