/**
 * Typed errors with stable codes. The CLI maps `exitCode` to the process exit status; nothing
 * else in the runtime exits the process.
 */

export const ExitCode = {
  success: 0,
  taskFailed: 1,
  usage: 2,
  budgetExhausted: 3,
  providerFailed: 4,
  permissionDenied: 5,
  /** A question only a person can answer came up with no one to ask; the run can be resumed with the answer. */
  needsInput: 5,
  /** A required tool source (an MCP server) could not be started, or was lost during the run. */
  toolSourceFailed: 6,
  interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export class ManusError extends Error {
  readonly code: string;
  readonly exitCode: ExitCodeValue;

  constructor(code: string, message: string, exitCode: ExitCodeValue, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.exitCode = exitCode;
  }
}

/** Where in a file something is wrong. Lines and columns count from 1. */
export interface SourceLocation {
  file: string;
  line?: number;
  column?: number;
}

export interface Diagnostic {
  /** A note tells what a file asks for (a grant a run needs), without anything being wrong. */
  severity: 'error' | 'warning' | 'note';
  message: string;
  location?: SourceLocation;
  /** A stable name for diagnostics that callers act on (CI mode refuses `literal_secret`). */
  code?: string;
}

export function formatLocation(location: SourceLocation | undefined): string {
  if (!location) return '';
  const file = shortPath(location.file);
  if (location.line === undefined) return file;
  return `${file}:${location.line}:${location.column ?? 1}`;
}

/** Paths under the current folder print relative to it, the way compilers report them. */
function shortPath(file: string): string {
  const cwd = process.cwd();
  return file.startsWith(`${cwd}/`) ? file.slice(cwd.length + 1) : file;
}

export function formatDiagnostic(diagnostic: Diagnostic): string {
  const where = formatLocation(diagnostic.location);
  return `${where ? `${where}: ` : ''}${diagnostic.severity}: ${diagnostic.message}`;
}

/** Bad YAML, schema violations, missing files or variables: found before any model call. */
export class ConfigError extends ManusError {
  readonly diagnostics: Diagnostic[];

  constructor(diagnostics: Diagnostic[]) {
    const errors = diagnostics.filter((diagnostic) => diagnostic.severity === 'error');
    const summary = errors.map(formatDiagnostic).join('\n');
    super('config_invalid', summary || 'invalid configuration', ExitCode.usage);
    this.diagnostics = diagnostics;
  }
}

export class UsageError extends ManusError {
  constructor(message: string) {
    super('usage', message, ExitCode.usage);
  }
}

export class PluginLoadError extends ManusError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('plugin_invalid', message, ExitCode.usage, options);
  }
}

export type ProviderFailureKind =
  | 'not_configured'
  | 'unreachable'
  | 'authentication'
  | 'permission'
  | 'not_found'
  | 'bad_request'
  | 'rate_limited'
  | 'quota_exceeded'
  | 'server_error'
  | 'timeout'
  | 'malformed_reply'
  | 'context_too_long';

/** The model provider could not give a usable reply after the retry policy ran its course. */
export class ProviderError extends ManusError {
  readonly kind: ProviderFailureKind;
  readonly status?: number;

  constructor(kind: ProviderFailureKind, message: string, options?: { status?: number; cause?: unknown }) {
    super(`provider_${kind}`, message, ExitCode.providerFailed, options);
    this.kind = kind;
    this.status = options?.status;
  }
}

/** A tool's expected failure; the message goes back to the model as an error result. */
export class ToolError extends ManusError {
  constructor(message: string, code = 'tool_failed') {
    super(code, message, ExitCode.taskFailed);
  }
}

/** An action the run's permissions forbid, or an approval needed with no one to ask. */
export class PermissionDeniedError extends ManusError {
  constructor(message: string) {
    super('permission_denied', message, ExitCode.permissionDenied);
  }
}

/**
 * The agent asked a question that no one was there to answer (a run without a terminal, no
 * --answer left, no recipe answer matching). The run stops, to be resumed with the answer.
 */
export class HumanInputNeededError extends ManusError {
  readonly question: string;

  constructor(question: string) {
    super('needs_input', `the agent needs an answer to "${question}", and the run is not interactive`, ExitCode.needsInput);
    this.question = question;
  }
}

export class InterruptedError extends ManusError {
  constructor(message = 'interrupted') {
    super('interrupted', message, ExitCode.interrupted);
  }
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
