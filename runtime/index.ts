/**
 * The public API, imported as 'manus-runtime': the contract between the kernel and every tool
 * plugin, built-in or not, and the API for embedding the runtime in a program. Nothing else is
 * exported; docs/api.md describes each name.
 */

// Plugins: tools and context providers.
export { defineTool } from './tool.js';
export type { ChatMessage, JsonSchema, ToolContext, ToolDefinition, ToolImage, ToolResult } from './tool.js';
export type { SchemaInput } from './schema-input.js';
export type { DoctorContext, DoctorFinding } from './doctor/doctor-finding.js';
export { defineContextProvider } from './context-provider.js';
export type { ContextProviderDefinition, ContextProviderInput, ContextSnapshot } from './context-provider.js';
export { ManusError, ToolError, ConfigError } from './errors.js';
export { didYouMean } from './config/did-you-mean.js';

// Plugins: kinds of flow steps.
export { defineStepKind } from './flow/step-kind.js';
export type { StepContext, StepKindDefinition, StepResult } from './flow/step-kind.js';

// Services for tools: the confined workspace, long output, commands in the run's sandbox.
export type { WorkspaceFiles, WorkspaceFolder } from './workspace-files.js';
export { protectedPathNotice } from './protected-paths.js';
export { limitOutput, OutputFile, savedOutputLimitBytes } from './saved-output.js';
export { truncateMiddle } from './truncate.js';
export type { Sandbox, SandboxCommandResult } from './sandbox/sandbox-types.js';
export { SentinelSession } from './sandbox/sentinel-session.js';
export type { SentinelExchangeResult } from './sandbox/sentinel-session.js';
export { decodeExitStatus } from './sandbox/exit-status.js';
export { compareSnapshots, snapshotWorkspace } from './sandbox/workspace-changes.js';
export type { WorkspaceChanges } from './sandbox/workspace-changes.js';

// Embedding: load, validate and run recipes from code.
export { resolveRecipe } from './config/resolve-recipe.js';
export type { RunPlan } from './config/resolve-recipe.js';
export { executeRun } from './run.js';
export type { RunOptions, RunResult, RunStatus } from './run.js';
export { validateFiles } from './validate.js';
export type { ChatModel, ModelReply, ModelRequest } from './model/model-types.js';
