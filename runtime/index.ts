/**
 * The public API, imported as 'manus-runtime': the contract between the kernel and every tool
 * plugin, built-in or not, and the API for embedding the runtime in a program. Nothing else is
 * exported; docs/api.md describes each name.
 */

// Plugins: tools and context providers.
export { defineTool } from './contract/tool.js';
export type { ChatMessage, JsonSchema, ToolContext, ToolDefinition, ToolImage, ToolResult } from './contract/tool.js';
export type { SchemaInput } from './contract/schema-input.js';
export type { DoctorContext, DoctorFinding } from './contract/doctor-finding.js';
export { defineContextProvider } from './contract/context-provider.js';
export type { ContextProviderDefinition, ContextProviderInput, ContextSnapshot } from './contract/context-provider.js';
export { ManusError, ToolError, ConfigError } from './contract/errors.js';
export { didYouMean } from './contract/did-you-mean.js';

// Plugins: kinds of flow steps.
export { defineStepKind } from './contract/step-kind.js';
export type { StepContext, StepKindDefinition, StepResult } from './contract/step-kind.js';

// Plugins: scorers for evals.
export { defineScorer } from './contract/scorer.js';
export type { ScorerDefinition } from './contract/scorer.js';

// Services for tools: the confined workspace, long output, commands in the run's sandbox.
export { protectedPathNotice } from './services/protected-paths/protected-paths.js';
export { limitOutput, OutputFile, savedOutputLimitBytes } from './services/saved-output.js';
export { truncateMiddle } from './contract/truncate.js';
export type { Sandbox, SandboxCommandResult } from './contract/sandbox-types.js';
export { SentinelSession } from './services/sandbox/sentinel-session.js';
export type { SentinelExchangeResult } from './services/sandbox/sentinel-session.js';
export { decodeExitStatus } from './services/sandbox/exit-status.js';
export { compareSnapshots, snapshotWorkspace } from './services/sandbox/workspace-changes.js';
export type { WorkspaceChanges } from './services/sandbox/workspace-changes.js';
export type { WorkspaceFiles, WorkspaceFolder } from './contract/workspace-files.js';

// Embedding: load, validate and run recipes from code.
export { resolveRecipe } from './runs/recipe/resolve-recipe.js';
export type { RunPlan } from './runs/recipe/resolve-recipe.js';
export { executeRun } from './runs/run.js';
export type { RunOptions, RunResult, RunStatus } from './runs/run.js';
export { validateFiles } from './runs/validate.js';
export type { ChatModel, ModelReply, ModelRequest } from './contract/model-types.js';
