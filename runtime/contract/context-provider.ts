/**
 * Context providers add live state to each model request (the browser's page, a plan's progress)
 * without storing it in history: the model sees the current state, never a pile of stale ones.
 */
import type { RunResources, ToolImage } from './tool.js';

export interface ContextSnapshot {
  text?: string;
  images?: ToolImage[];
}

export interface ContextProviderInput {
  runId: string;
  workspace: string;
  runDirectory: string;
  step: number;
  /** Tools called in the last few turns, so a provider can stay quiet when its tool is not in use. */
  recentTools: ReadonlySet<string>;
  resources: RunResources;
  signal: AbortSignal;
  /** Whether the model takes images; a provider should not capture screenshots for one that does not. */
  vision: boolean;
  /** Settings for the provider from the agent or recipe (`tool_settings.<provider name>`). */
  settings: Record<string, unknown>;
}

/** What changes from step to step in a provider's input; the run adds the rest. */
export type ContextProviderStep = Pick<ContextProviderInput, 'step' | 'recentTools' | 'signal'>;

export interface ContextProviderDefinition {
  name: string;
  description: string;
  render(input: ContextProviderInput): Promise<ContextSnapshot | undefined> | ContextSnapshot | undefined;
}

/** Identity helper for plugin authors, like defineTool. */
export function defineContextProvider(provider: ContextProviderDefinition): ContextProviderDefinition {
  return provider;
}
