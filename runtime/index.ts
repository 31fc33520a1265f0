/** The public API for plugin authors and embedders. */
export { defineTool } from './tool.js';
export type {
  AnyToolDefinition,
  AssistantToolCall,
  ChatContentPart,
  ChatMessage,
  HumanChannel,
  HumanQuestionOptions,
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
  HumanInputNeededError,
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
export { isInside, listWorkspaceFiles, resolveInWorkspace, resolveToolPath, WorkspacePathError } from './workspace-paths.js';
export { ProtectedPaths, protectedPathNotice, protectedPathsFor } from './protected-paths.js';
export type { ProtectedPath, ProtectedPathChange } from './protected-paths.js';
export type { WorkspaceAccess, WorkspacePathErrorCode } from './workspace-paths.js';
export { decodeBytes, defaultSavedOutputLimitMegabytes, limitOutput, OutputFile, savedOutputLimitBytes } from './saved-output.js';
export type { LimitedOutput, LimitOutputOptions, OutputFileOptions } from './saved-output.js';
export { createSandbox, probeBwrap } from './sandbox/create-sandbox.js';
export { chooseAutoSandbox } from './sandbox/auto-sandbox.js';
export type { HostConsent, SandboxChoice } from './sandbox/auto-sandbox.js';
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

// Web pages and search without a browser.
export { htmlToMarkdown } from './web/html-to-markdown.js';
export type { HtmlToMarkdownOptions, MarkdownPage, PageLink } from './web/html-to-markdown.js';
export { readWebPage } from './web/read-page.js';
export type { ReadPageOptions, WebPage } from './web/read-page.js';
export { readFetchSettings } from './web/web-settings.js';
export type { FetchSettings } from './web/web-settings.js';
export { extractForGoal } from './web/goal-extraction.js';
export type { GoalExtraction, GoalExtractionOptions } from './web/goal-extraction.js';
export { maximumResults, searchWeb } from './web/search-web.js';
export type { SearchContext, SearchOptions, SearchOutcome } from './web/search-web.js';
export { formatSearchOutcome } from './web/search-report.js';
export type { SearchQuery, SearchResult } from './web/search-types.js';
export { checkDomainAllowed, parseWebUrl, readDomainRules } from './web/domain-rules.js';
export type { DomainRules } from './web/domain-rules.js';
export { WebError, WebSearchError } from './web/web-errors.js';
export type { EngineFailure, WebErrorCode } from './web/web-errors.js';

// The browser: sessions, actions, live state and page extraction.
export { BrowserError } from './browser/browser-errors.js';
export type { BrowserErrorCode } from './browser/browser-errors.js';
export {
  defaultScreenshotQuality,
  defaultStateCharacters,
  readBrowserSettings,
  readBrowserStateSettings,
  readExtractionSettings,
} from './browser/browser-settings.js';
export type { BrowserProxy, BrowserSettings, BrowserStateSettings, ExtractionSettings } from './browser/browser-settings.js';
export { BrowserSession } from './browser/browser-session.js';
export type { BrowserTab, SessionNotes } from './browser/browser-session.js';
export {
  browserResourceKey,
  browserSessionFor,
  existingBrowserSession,
  isStateProviderActive,
  markStateProviderActive,
} from './browser/session-registry.js';
export { browserActions, browserUseParameters, runBrowserAction } from './browser/browser-use-action.js';
export type { BrowserAction, BrowserUseInput } from './browser/browser-use-action.js';
export { renderBrowserState } from './browser/browser-state.js';
export type { BrowserState, BrowserStateOptions } from './browser/browser-state.js';
export { pageToMarkdown } from './browser/page-markdown.js';
export type { PageMarkdown } from './browser/page-markdown.js';
export { chunkMarkdown, extractFromPage, extractionSchema, formatExtraction, parseExtraction } from './browser/content-extraction.js';
export type { Extraction, ExtractionOutcome, ExtractionPage } from './browser/content-extraction.js';
export { extractFromActivePage } from './browser/extract-page.js';
