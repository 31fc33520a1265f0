/**
 * Typed errors with stable codes. Each class marks its instances with a registered symbol and
 * recognises them with a static `isInstance`, which holds where `instanceof` does not: for an
 * error made by another copy of this module, such as a plugin bundled with its own copy of the
 * runtime. A subclass declares its own marker and `isInstance`, as the classes here do. What an
 * error means for the process exit status is for the CLI to say (cli/exit-codes.ts).
 */

const manusErrorMarker = 'manus.error';
const manusErrorSymbol = Symbol.for(manusErrorMarker);

export class ManusError extends Error {
  private readonly [manusErrorSymbol] = true;
  /** Stable, for callers to act on: `config_invalid`, `permission_denied`, `provider_rate_limited`, ... */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }

  static isInstance(error: unknown): error is ManusError {
    return ManusError.hasMarker(error, manusErrorMarker);
  }

  /** Whether `error` carries the marker registered under `marker`, whichever copy of a class made it. */
  protected static hasMarker(error: unknown, marker: string): boolean {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[Symbol.for(marker)] === true;
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

const configErrorMarker = 'manus.error.ConfigError';
const configErrorSymbol = Symbol.for(configErrorMarker);

/** Bad YAML, schema violations, missing files or variables: found before any model call. */
export class ConfigError extends ManusError {
  private readonly [configErrorSymbol] = true;
  readonly diagnostics: Diagnostic[];

  constructor(diagnostics: Diagnostic[]) {
    const errors = diagnostics.filter((diagnostic) => diagnostic.severity === 'error');
    const summary = errors.map(formatDiagnostic).join('\n');
    super('config_invalid', summary || 'invalid configuration');
    this.diagnostics = diagnostics;
  }

  static isInstance(error: unknown): error is ConfigError {
    return ManusError.hasMarker(error, configErrorMarker);
  }
}

const usageErrorMarker = 'manus.error.UsageError';
const usageErrorSymbol = Symbol.for(usageErrorMarker);

/** A command line, run id or recording that cannot be used as given. */
export class UsageError extends ManusError {
  private readonly [usageErrorSymbol] = true;

  constructor(message: string) {
    super('usage', message);
  }

  static isInstance(error: unknown): error is UsageError {
    return ManusError.hasMarker(error, usageErrorMarker);
  }
}

const pluginLoadErrorMarker = 'manus.error.PluginLoadError';
const pluginLoadErrorSymbol = Symbol.for(pluginLoadErrorMarker);

export class PluginLoadError extends ManusError {
  private readonly [pluginLoadErrorSymbol] = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super('plugin_invalid', message, options);
  }

  static isInstance(error: unknown): error is PluginLoadError {
    return ManusError.hasMarker(error, pluginLoadErrorMarker);
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

const providerErrorMarker = 'manus.error.ProviderError';
const providerErrorSymbol = Symbol.for(providerErrorMarker);

/** The model provider could not give a usable reply after the retry policy ran its course. */
export class ProviderError extends ManusError {
  private readonly [providerErrorSymbol] = true;
  readonly kind: ProviderFailureKind;
  readonly status?: number;

  constructor(kind: ProviderFailureKind, message: string, options?: { status?: number; cause?: unknown }) {
    super(`provider_${kind}`, message, options);
    this.kind = kind;
    this.status = options?.status;
  }

  static isInstance(error: unknown): error is ProviderError {
    return ManusError.hasMarker(error, providerErrorMarker);
  }
}

const toolErrorMarker = 'manus.error.ToolError';
const toolErrorSymbol = Symbol.for(toolErrorMarker);

/** A tool's expected failure; the message goes back to the model as an error result. */
export class ToolError extends ManusError {
  private readonly [toolErrorSymbol] = true;

  constructor(message: string, code = 'tool_failed') {
    super(code, message);
  }

  static isInstance(error: unknown): error is ToolError {
    return ManusError.hasMarker(error, toolErrorMarker);
  }
}

const permissionDeniedErrorMarker = 'manus.error.PermissionDeniedError';
const permissionDeniedErrorSymbol = Symbol.for(permissionDeniedErrorMarker);

/** An action the run's permissions forbid, or an approval needed with no one to ask. */
export class PermissionDeniedError extends ManusError {
  private readonly [permissionDeniedErrorSymbol] = true;

  constructor(message: string) {
    super('permission_denied', message);
  }

  static isInstance(error: unknown): error is PermissionDeniedError {
    return ManusError.hasMarker(error, permissionDeniedErrorMarker);
  }
}

const humanInputNeededErrorMarker = 'manus.error.HumanInputNeededError';
const humanInputNeededErrorSymbol = Symbol.for(humanInputNeededErrorMarker);

/**
 * The agent asked a question that no one was there to answer (a run without a terminal, no
 * --answer left, no recipe answer matching). The run stops, to be resumed with the answer.
 */
export class HumanInputNeededError extends ManusError {
  private readonly [humanInputNeededErrorSymbol] = true;
  readonly question: string;

  constructor(question: string) {
    super('needs_input', `the agent needs an answer to "${question}", and the run is not interactive`);
    this.question = question;
  }

  static isInstance(error: unknown): error is HumanInputNeededError {
    return ManusError.hasMarker(error, humanInputNeededErrorMarker);
  }
}

const approvalNeededErrorMarker = 'manus.error.ApprovalNeededError';
const approvalNeededErrorSymbol = Symbol.for(approvalNeededErrorMarker);

/**
 * A call needs the user's approval and no one is there to give it. The run stops as waiting for
 * input, with the call pending: `manus resume <id> --approve <call>` (or `--deny`) continues it.
 */
export class ApprovalNeededError extends ManusError {
  private readonly [approvalNeededErrorSymbol] = true;
  readonly callId: string;
  readonly tool: string;

  constructor(callId: string, tool: string, why: string) {
    super('approval_needed', `the call ${callId} to '${tool}' needs approval (${why}), and the run is not interactive`);
    this.callId = callId;
    this.tool = tool;
  }

  static isInstance(error: unknown): error is ApprovalNeededError {
    return ManusError.hasMarker(error, approvalNeededErrorMarker);
  }
}

const interruptedErrorMarker = 'manus.error.InterruptedError';
const interruptedErrorSymbol = Symbol.for(interruptedErrorMarker);

/** The user stopped the run (Ctrl-C, SIGTERM); the reason its signal was aborted with. */
export class InterruptedError extends ManusError {
  private readonly [interruptedErrorSymbol] = true;

  constructor(message = 'interrupted') {
    super('interrupted', message);
  }

  static isInstance(error: unknown): error is InterruptedError {
    return ManusError.hasMarker(error, interruptedErrorMarker);
  }
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
