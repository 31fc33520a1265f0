/** The public API for plugin authors and embedders. */
export { defineTool } from './tool.js';
export type {
  AnyToolDefinition,
  AssistantToolCall,
  ChatContentPart,
  ChatMessage,
  HumanChannel,
  JsonSchema,
  RunResources,
  SandboxSettings,
  ToolContext,
  ToolDefinition,
  ToolImage,
  ToolLogger,
  ToolModelAccess,
  ToolResult,
  TraceWriter,
} from './tool.js';
export {
  ConfigError,
  ExitCode,
  InterruptedError,
  ManusError,
  PermissionDeniedError,
  PluginLoadError,
  ProviderError,
  ToolError,
  UsageError,
} from './errors.js';
export { truncateMiddle } from './truncate.js';

// Tool support modules (workspace confinement, output limits, sandboxes) export below.
export { isInside, listWorkspaceFiles, resolveInWorkspace, WorkspacePathError } from './workspace-paths.js';
export type { WorkspaceAccess, WorkspacePathErrorCode } from './workspace-paths.js';
export { decodeBytes, limitOutput } from './saved-output.js';
export type { LimitedOutput, LimitOutputOptions } from './saved-output.js';
export { createSandbox, defaultSandboxKind, probeBwrap } from './sandbox/create-sandbox.js';
export type { BwrapAvailability, SandboxRequest } from './sandbox/create-sandbox.js';
export type {
  Sandbox,
  SandboxCommand,
  SandboxCommandOptions,
  SandboxCommandResult,
  SandboxKind,
  SandboxPlacement,
  SandboxSession,
  SandboxSessionOptions,
  SessionExit,
} from './sandbox/sandbox-types.js';
export { SandboxError } from './sandbox/sandbox-errors.js';
export type { SandboxErrorCode } from './sandbox/sandbox-errors.js';
export { readSandboxOptions } from './sandbox/sandbox-options.js';
export type { SandboxOptions, SandboxUser } from './sandbox/sandbox-options.js';
export { sandboxForRun, sandboxResourceKey } from './sandbox/run-sandbox.js';
export { probeDocker } from './sandbox/docker-connection.js';
export type { DockerAvailability } from './sandbox/docker-connection.js';
export { cleanupLeftoverContainers } from './sandbox/docker-ownership.js';
export { SentinelSession } from './sandbox/sentinel-session.js';
export type { SentinelExchangeOptions, SentinelExchangeResult, SessionStream } from './sandbox/sentinel-session.js';
export { encodePythonRequest, pythonDriverCommand } from './sandbox/python-driver.js';
export type { PythonDriverMode } from './sandbox/python-driver.js';
export { compareSnapshots, snapshotWorkspace } from './sandbox/workspace-changes.js';
export type { WorkspaceChanges, WorkspaceSnapshot } from './sandbox/workspace-changes.js';
export { decodeExitStatus } from './sandbox/exit-status.js';

// Embedding: load, validate and run recipes from code.
export { defineContextProvider } from './context-provider.js';
export type { ContextProviderDefinition, ContextProviderInput, ContextSnapshot } from './context-provider.js';
export { resolveRecipe } from './config/resolve-recipe.js';
export type { RecipeOverrides, RunPlan } from './config/resolve-recipe.js';
export { executeRun } from './run.js';
export type { RunOptions, RunResult, RunStatus } from './run.js';
export { validateFiles } from './validate.js';
