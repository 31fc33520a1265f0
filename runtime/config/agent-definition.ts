/** Turns one validated agent mapping (in agents.yaml or inline in a recipe) into an AgentConfig. */
import type { Diagnostic } from '../contract/errors.js';
import type { SandboxSettings } from '../contract/tool.js';
import { agentDefaults, permissionDefaults, sandboxDefaults } from './defaults.js';
import { loadPrompt } from './prompt-source.js';
import { readSandboxUser } from './sandbox-user.js';
import type { AgentYaml, PermissionsYaml, SandboxYaml } from './schema-types.generated.js';
import { readSettingLocations } from './setting-locations.js';
import type { AgentConfig, CompactionSettings, PermissionSettings } from './types.js';
import { parsePermissionRule } from './permission-rules.js';
import { locate, type YamlPath, type YamlSource } from './yaml-source.js';

export function readAgentDefinition(
  name: string,
  raw: AgentYaml,
  source: YamlSource,
  path: YamlPath,
  diagnostics: Diagnostic[],
  trusted = false,
): AgentConfig {
  const systemPrompt = raw.system_prompt === undefined ? undefined : loadPrompt(source, [...path, 'system_prompt'], raw.system_prompt, diagnostics);
  const nextStepPrompt = raw.next_step_prompt === undefined ? undefined : loadPrompt(source, [...path, 'next_step_prompt'], raw.next_step_prompt, diagnostics);
  const tools = raw.tools ?? [...agentDefaults.tools];
  const toolLocations = Object.fromEntries(tools.map((tool, index) => [tool, locate(source, [...path, 'tools', index])]));
  return {
    name,
    description: raw.description ?? agentDefaults.description,
    systemPrompt: systemPrompt?.text ?? agentDefaults.system_prompt,
    nextStepPrompt: nextStepPrompt?.text,
    tools,
    maxSteps: raw.max_steps ?? agentDefaults.max_steps,
    maxObserve: raw.max_observe ?? agentDefaults.max_observe,
    toolChoice: raw.tool_choice ?? agentDefaults.tool_choice,
    parallelToolCalls: raw.parallel_tool_calls ?? agentDefaults.parallel_tool_calls,
    finishOnText: raw.finish_on_text ?? agentDefaults.finish_on_text,
    stuckAfter: raw.stuck_after ?? agentDefaults.stuck_after,
    errorStreak: raw.error_streak ?? agentDefaults.error_streak,
    compaction: readCompaction(raw.compaction),
    llm: raw.llm ?? agentDefaults.llm,
    contextProviders: raw.context_providers ?? [...agentDefaults.context_providers],
    sandbox: readSandbox(raw.sandbox, source, [...path, 'sandbox'], diagnostics),
    permissions: readPermissions(raw.permissions, { source, path: [...path, 'permissions'], diagnostics }),
    toolSettings: raw.tool_settings ?? { ...agentDefaults.tool_settings },
    location: locate(source, path),
    toolLocations,
    origin: { file: source.file, trusted },
    settingLocations: readSettingLocations(source, path, raw),
    promptFiles: [systemPrompt?.file, nextStepPrompt?.file].filter((file): file is string => file !== undefined),
  };
}

/** An agent's compaction settings; with nothing written, the defaults. */
export function readCompaction(raw: AgentYaml['compaction'] = {}): CompactionSettings {
  return {
    threshold: raw.threshold ?? agentDefaults.compaction.threshold,
    keepRecentMessages: raw.keep_recent_messages ?? agentDefaults.compaction.keep_recent_messages,
  };
}

/** An agent's or a recipe's sandbox; a `user` that is root or in a privileged group is an error at its place. */
export function readSandbox(raw: SandboxYaml | undefined, source: YamlSource, path: YamlPath, diagnostics: Diagnostic[]): SandboxSettings | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw === 'string') return { kind: raw, network: sandboxDefaults.network, options: {} };
  const { kind, network, ...options } = raw;
  if (typeof options.user === 'string') {
    const user = readSandboxUser(options.user);
    if ('problem' in user) diagnostics.push({ severity: 'error', message: `sandbox.user: ${user.problem}`, location: locate(source, [...path, 'user']) });
  }
  if (typeof network === 'object') {
    // Each pattern is checked where the loaders can read host patterns (runs/recipe/sandbox-hosts.ts).
    const allowHosts = [...network.allow];
    const allowHostLocations = allowHosts.map((_, index) => locate(source, [...path, 'network', 'allow', index]));
    return { kind, network: false, allowHosts, allowHostLocations, options };
  }
  return { kind, network: network ?? sandboxDefaults.network, options };
}

/**
 * A `permissions:` block. With its source, each rule is read now, so a rule that is not one stops
 * the run before it starts, with its place in the file; the places are kept for `manus validate`.
 */
export function readPermissions(raw: PermissionsYaml | undefined, where?: { source: YamlSource; path: YamlPath; diagnostics: Diagnostic[] }): PermissionSettings {
  const settings: PermissionSettings = {
    default: raw?.default ?? permissionDefaults.default,
    allow: raw?.allow ?? [...permissionDefaults.allow],
    ask: raw?.ask ?? [...permissionDefaults.ask],
    deny: raw?.deny ?? [...permissionDefaults.deny],
    onAsk: raw?.on_ask ?? permissionDefaults.on_ask,
  };
  if (!where) return settings;
  const locations: NonNullable<PermissionSettings['locations']> = { allow: [], ask: [], deny: [] };
  for (const list of ['allow', 'ask', 'deny'] as const) {
    settings[list].forEach((text, index) => {
      const location = locate(where.source, [...where.path, list, index]);
      locations[list].push(location);
      const rule = parsePermissionRule(text);
      if ('problem' in rule) where.diagnostics.push({ severity: 'error', message: `permissions.${list}: ${rule.problem}`, location });
    });
  }
  return { ...settings, locations };
}
