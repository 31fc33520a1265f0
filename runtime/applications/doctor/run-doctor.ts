/**
 * `manus doctor`'s findings: the model endpoint and the sandboxes, which the kernel checks itself,
 * then what each loaded tool's own `doctor` check reports (the Python python_execute runs, the
 * browser browser_use starts), so the kernel names no tool. All checks run at once, within a deadline.
 */
import { agentDefaults, sandboxDefaults } from '../../config/defaults.js';
import { readModelProfile } from '../../runs/recipe/load-agents.js';
import { agentsFilesFor, loadAgentsConfig, pluginFoldersFor } from '../../runs/recipe/resolve-recipe.js';
import type { AgentConfig, AgentsConfig } from '../../config/types.js';
import { loadUserConfig } from '../../runs/recipe/user-config.js';
import { didYouMean } from '../../contract/did-you-mean.js';
import { ConfigError, UsageError, type Diagnostic } from '../../contract/errors.js';
import { loadPluginFolders } from '../../kernel/plugin-loading/load-plugins.js';
import { readSandboxOptions } from '../../services/sandbox/sandbox-options.js';
import type { AnyToolDefinition } from '../../contract/tool.js';
import type { DoctorContext, DoctorFinding } from '../../contract/doctor-finding.js';
import { doctorSandbox } from './doctor-sandbox.js';
import { modelFindings } from './model-findings.js';
import { sandboxFindings } from './sandbox-findings.js';

export interface DoctorOptions {
  cwd: string;
  environment: NodeJS.ProcessEnv;
  /** Check this agent's model profile, sandbox image and tools with its settings; else every tool, with no settings. */
  agent?: string;
  /** A deadline for every check together. */
  timeoutMs?: number;
}

export interface DoctorEntry extends DoctorFinding {
  /** `runtime`, or the tool whose check this is. */
  source: string;
}

export interface DoctorReport {
  /** The agent whose settings were checked, if one was named. */
  agent?: string;
  /** No finding is `missing`. */
  ok: boolean;
  findings: DoctorEntry[];
  /** Problems in the agents files or plugins, reported beside the findings. */
  diagnostics: Diagnostic[];
}

const defaultTimeoutMs = 30_000;

export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const { config, diagnostics } = loadAgentsConfig(agentsFilesFor(undefined, options.cwd));
  const agent = options.agent === undefined ? undefined : config.agents.get(options.agent);
  if (options.agent !== undefined && !agent) {
    throw new UsageError(`no agent named '${options.agent}'${didYouMean(options.agent, config.agents.keys())}`);
  }
  const errors = diagnostics.filter((diagnostic) => diagnostic.severity === 'error');
  if (errors.length > 0) throw new ConfigError(errors);
  const profileName = agent?.llm ?? agentDefaults.llm;
  const profile = config.profiles.get(profileName) ?? readModelProfile(profileName);
  // As in a run: the user's keys go to an endpoint that an untrusted file chose only with the env grant.
  const grants = loadUserConfig(options.environment).config.trust;
  const sendKeys = profile.trusted === true || profile.baseUrl === undefined || grants.has('env');
  const image = readSandboxOptions(agent?.sandbox?.options ?? {}).image;
  const loaded = await loadPluginFolders(pluginFoldersFor(options.cwd, undefined, agent?.tools));
  const tools = [...loaded.tools.values()]
    .map(({ tool }) => tool)
    .filter((tool) => tool.doctor !== undefined && (agent === undefined || agent.tools.includes(tool.name)))
    .sort((left, right) => left.name.localeCompare(right.name));

  const deadline = AbortSignal.timeout(options.timeoutMs ?? defaultTimeoutMs);
  const sandboxKind = agent?.sandbox?.kind ?? sandboxDefaults.kind;
  const sandbox = doctorSandbox({ kind: sandboxKind, network: false, options: agent?.sandbox?.options ?? {} }, options.environment);
  let groups: DoctorEntry[][];
  try {
    groups = await Promise.all([
      within(deadline, 'model endpoint', 'runtime', () => modelFindings(profileName, profile, options.environment, sendKeys)),
      within(deadline, 'sandbox', 'runtime', () => sandboxFindings(sandboxKind, image, options.environment)),
      ...tools.map((tool) =>
        within(deadline, tool.name, tool.name, () =>
          toolFindings(tool, trustedSettings(agent, config)[tool.name] ?? {}, { environment: options.environment, signal: deadline, sandbox: sandbox.get })),
      ),
    ]);
  } finally {
    await sandbox.dispose();
  }
  const findings = uniqueFindings(groups.flat());
  return {
    ...(agent ? { agent: agent.name } : {}),
    ok: findings.every((finding) => finding.status !== 'missing'),
    findings,
    diagnostics: [...diagnostics, ...loaded.diagnostics],
  };
}

/**
 * The tool settings the checks use: an agent's own when the package's agents.yaml defines it, else
 * that file's version of the agent. Checks run programs on the host (the Python, the browser), which
 * a project's or a recipe's agents.yaml is not trusted to choose.
 */
function trustedSettings(agent: AgentConfig | undefined, config: AgentsConfig): AgentConfig['toolSettings'] {
  if (!agent) return {};
  if (agent.origin?.trusted !== false) return agent.toolSettings;
  return config.trustedAgents.get(agent.name)?.toolSettings ?? {};
}

async function toolFindings(tool: AnyToolDefinition, settings: Record<string, unknown>, context: DoctorContext): Promise<DoctorFinding[]> {
  return await tool.doctor!(settings, context);
}

/** A check's findings tagged with their source; a check that throws or runs past the deadline becomes a warning. */
async function within(deadline: AbortSignal, check: string, source: string, run: () => Promise<DoctorFinding[]>): Promise<DoctorEntry[]> {
  const expired = new Promise<never>((_, reject) => {
    if (deadline.aborted) reject(new Error('the deadline passed'));
    deadline.addEventListener('abort', () => reject(new Error('it did not finish in time')), { once: true });
  });
  // Once the check has finished, the deadline's rejection has no one left to tell.
  expired.catch(() => undefined);
  try {
    const findings = await Promise.race([run(), expired]);
    return findings.map((finding) => ({ ...finding, source }));
  } catch (error) {
    return [{ check, status: 'warning', detail: `the check could not be completed: ${(error as Error).message}`, source }];
  }
}

/** Two tools that need the same thing report it once. */
function uniqueFindings(findings: DoctorEntry[]): DoctorEntry[] {
  const seen = new Set<string>();
  return findings.filter((finding) => {
    const key = `${finding.check}\n${finding.status}\n${finding.detail}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
