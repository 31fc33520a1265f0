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
