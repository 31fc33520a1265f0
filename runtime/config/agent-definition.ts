/** Turns one validated agent mapping (in agents.yaml or inline in a recipe) into an AgentConfig. */
import { defaultCompactionSettings } from '../context-compaction.js';
import type { Diagnostic } from '../errors.js';
import type { SandboxSettings } from '../tool.js';
import { loadPrompt } from './prompt-source.js';
import { readSettingLocations } from './setting-locations.js';
import type { AgentConfig, PermissionSettings } from './types.js';
import { locate, type YamlPath, type YamlSource } from './yaml-source.js';

export const agentDefaults = {
  maxSteps: 20,
  maxObserve: 10_000,
  stuckAfter: 3,
  errorStreak: 5,
  systemPrompt: 'You are a capable assistant. Work step by step, use the tools you have, and finish with the terminate tool when the task is done.',
} as const;

type RawAgent = Record<string, unknown>;

export function readAgentDefinition(
  name: string,
  raw: RawAgent,
  source: YamlSource,
  path: YamlPath,
  diagnostics: Diagnostic[],
  trusted = false,
): AgentConfig {
  const systemPrompt = raw.system_prompt === undefined ? undefined : loadPrompt(source, [...path, 'system_prompt'], raw.system_prompt, diagnostics);
  const nextStepPrompt = raw.next_step_prompt === undefined ? undefined : loadPrompt(source, [...path, 'next_step_prompt'], raw.next_step_prompt, diagnostics);
  const tools = (raw.tools as string[] | undefined) ?? ['terminate'];
  const toolLocations = Object.fromEntries(tools.map((tool, index) => [tool, locate(source, [...path, 'tools', index])]));
  return {
    name,
    description: (raw.description as string | undefined) ?? '',
    systemPrompt: systemPrompt?.text ?? agentDefaults.systemPrompt,
    nextStepPrompt: nextStepPrompt?.text,
    tools,
    maxSteps: (raw.max_steps as number | undefined) ?? agentDefaults.maxSteps,
    maxObserve: (raw.max_observe as number | undefined) ?? agentDefaults.maxObserve,
    toolChoice: (raw.tool_choice as AgentConfig['toolChoice'] | undefined) ?? 'auto',
    parallelToolCalls: (raw.parallel_tool_calls as boolean | undefined) ?? true,
    finishOnText: (raw.finish_on_text as boolean | undefined) ?? true,
    stuckAfter: (raw.stuck_after as number | undefined) ?? agentDefaults.stuckAfter,
    errorStreak: (raw.error_streak as number | undefined) ?? agentDefaults.errorStreak,
    compaction: {
      threshold: (raw.compaction as { threshold?: number } | undefined)?.threshold ?? defaultCompactionSettings.threshold,
      keepRecentMessages: (raw.compaction as { keep_recent_messages?: number } | undefined)?.keep_recent_messages ?? defaultCompactionSettings.keepRecentMessages,
    },
    llm: (raw.llm as string | undefined) ?? 'default',
    contextProviders: (raw.context_providers as string[] | undefined) ?? [],
    sandbox: readSandbox(raw.sandbox),
    permissions: readPermissions(raw.permissions),
    toolSettings: (raw.tool_settings as AgentConfig['toolSettings'] | undefined) ?? {},
    location: locate(source, path),
    toolLocations,
    origin: { file: source.file, trusted },
    settingLocations: readSettingLocations(source, path, raw),
    promptFiles: [systemPrompt?.file, nextStepPrompt?.file].filter((file): file is string => file !== undefined),
  };
}

export function readSandbox(raw: unknown): SandboxSettings | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw === 'string') return { kind: raw as SandboxSettings['kind'], network: false, options: {} };
  const { kind, network, ...options } = raw as Record<string, unknown>;
  return { kind: kind as SandboxSettings['kind'], network: network === true, options };
}

export function readPermissions(raw: unknown): PermissionSettings {
  const value = (raw ?? {}) as Partial<PermissionSettings>;
  return { deny: value.deny ?? [], ask: value.ask ?? [] };
}
