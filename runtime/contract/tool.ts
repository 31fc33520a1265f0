/**
 * The tool contract shared by the kernel and every plugin. A tool is a plain object; `defineTool`
 * only gives it a type, so a plugin file needs no base class and no registration call.
 */
import type { DoctorContext, DoctorFinding } from './doctor-finding.js';
import type { ProtectedPathGuard } from './protected-path-guard.js';
import type { Sandbox, SandboxSettings } from './sandbox-types.js';
import type { SchemaInput } from './schema-input.js';
import type { TrustGrant } from './trust-grants.js';

export type { SandboxSettings } from './sandbox-types.js';
import type { ToolNetwork } from './tool-network.js';
import type { WorkspaceFiles } from './workspace-files.js';

export type JsonSchema = Record<string, unknown>;

export interface ToolImage {
  /** Base64-encoded bytes. */
  data: string;
  mimeType: 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif';
}

export interface ToolResult {
  content: string;
  isError?: boolean;
  images?: ToolImage[];
  /** Workspace-relative paths of files the call produced. */
  files?: string[];
  /** Set by `terminate` and structured-answer tools: the run ends after this step. */
  finish?: { status: 'success' | 'failure'; answer: string; structured?: unknown };
  /**
   * Where the full output that `content` shortens was saved, in words for the model. The runner
   * keeps it in view when it shortens `content` again to the agent's `max_observe`.
   */
  savedOutputNotice?: string;
  /**
   * What the result says, as data, for a tool that calls this one (`context.callTool`); never sent
   * to the model, which reads `content`.
   */
  data?: unknown;
}

export interface ToolLogger {
  info(message: string): void;
  warn(message: string): void;
  debug(message: string): void;
}

/** A chat message as the runtime keeps it; the same shape the OpenAI chat API takes. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: AssistantToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } };

export interface AssistantToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** What a tool that calls the model (extraction, summaries) is given: one completion, no tools. */
export interface ToolModelAccess {
  complete(messages: ChatMessage[], options?: { responseSchema?: JsonSchema; signal?: AbortSignal }): Promise<string>;
}

/** Per-run resources a tool may keep between calls (a shell session, a browser) and that the runtime disposes. */
export interface RunResources {
  get<T>(key: string, create: () => T | Promise<T>, dispose?: (value: T) => void | Promise<void>): Promise<T>;
  /** Disposes one resource now, for tools that restart a session. */
  release(key: string): Promise<void>;
}

export interface TraceWriter {
  emit(type: string, data: Record<string, unknown>): void;
  /** The text with the run's secret values hidden; tool results pass through it before they are shortened. */
  redact?(text: string): string;
}

/** How a question reaches a person, or fails closed when no one can answer. */
export interface HumanChannel {
  ask(question: string, options?: HumanQuestionOptions): Promise<string>;
}

export interface HumanQuestionOptions {
  /** An answer is needed to go on; with no one to ask, every question stops the run (exit 5) either way. */
  required?: boolean;
  signal?: AbortSignal;
  /**
   * A permission prompt: only the user answers it, at the terminal or with --answer; a recipe's
   * `answers:` never do, since a recipe must not approve what its own agent is about to do.
   */
  permission?: boolean;
}

export interface ToolContext {
  runId: string;
  /** Absolute, real path of the run's workspace, for showing paths; files are opened through `files`. */
  workspace: string;
  /**
   * The workspace's files, opened so that no path can be raced out of it: every read, write and
   * listing of a workspace file goes through it, never through `node:fs` with a path string.
   */
  files: WorkspaceFiles;
  /** Absolute path of the run's folder (events, saved outputs, plans). */
  runDirectory: string;
  step: number;
  callId: string;
  signal: AbortSignal;
  logger: ToolLogger;
  trace: TraceWriter;
  model: ToolModelAccess;
  resources: RunResources;
  human: HumanChannel;
  /** Settings for the tool from the agent or recipe (`tool_settings.<name>`), already merged. */
  settings: Record<string, unknown>;
  /**
   * The sandbox chosen for the run (`host`, `bwrap`, `docker`; never `auto`), for tools that
   * execute code. It is chosen on the first call, so runs whose tools execute no code never probe
   * for one.
   */
  sandboxSettings(): Promise<SandboxSettings>;
  /**
   * The run's sandbox for commands, shared by every tool of the run and disposed when it ends. It
   * starts on the first call and mounts the protected paths read-only; each command is followed by
   * a check that none of them changed.
   */
  sandbox(): Promise<Sandbox>;
  /**
   * The network as the user allows tools to reach it: a fetch and a host check that refuse
   * loopback, private, link-local and metadata addresses unless the user's configuration allows them.
   */
  network: ToolNetwork;
  /**
   * Whether the run's permissions let this tool make a call with these arguments without asking:
   * for what a call leads to on its own, such as a redirect to another URL, so that a rule about
   * the URL the model gave also holds for every URL the tool then reaches.
   */
  checkPermission?(input: Record<string, unknown>): Promise<{ allowed: boolean; reason: string }>;
  /**
   * The paths the agent must not write (plugin folders, agents.yaml, the recipe, `.git/hooks`, ...).
   * `files` refuses to write them; the run's sandbox mounts them read-only.
   */
  protectedPaths?: ProtectedPathGuard;
  /**
   * Calls another tool, one this tool names in `calls`, as the run would call it for the model: its
   * arguments checked against its schema, its own `tool_settings`, and the run's permissions for it
   * (a rule about `web_search` holds for a search another tool makes). Its result comes back as
   * is, errors included; only an interrupt, a question or an approval no one can give here throws.
   */
  callTool?(name: string, input: Record<string, unknown>): Promise<ToolResult>;
}

/** A setting's grant, with the user's environment variables its value would receive (an endpoint's key). */
export interface SettingGrant {
  grant: TrustGrant;
  receives?: readonly string[];
}

export interface ToolDefinition<Input = Record<string, unknown>> {
  name: string;
  description: string;
  /** JSON Schema for the arguments; checked with ajv before `execute` runs. */
  parameters: JsonSchema;
  /**
   * Calls to tools that share state (one shell, one browser page) must not overlap. Such tools
   * run one at a time; all others in a turn run concurrently. A name instead of `true` puts the
   * tool in a group whose calls, to any of its tools, run one at a time (commands that change
   * the workspace, so each can tell which files it changed).
   */
  sequential?: boolean | string;
  /**
   * How to use the tool, at length (a family's actions, with examples): given to the model once, with
   * the tool's first result, instead of with every request as the description is. It is given again
   * after compaction has summarised away the result that carried it.
   */
  guide?: string;
  /**
   * A successful call ends the run (`terminate`, a structured answer). Calls the model listed
   * after such a call in the same turn are skipped, not run.
   */
  finishesRun?: boolean;
  /**
   * The tools this one calls through `context.callTool`, by name: a run that offers this tool loads
   * them too, with their settings' grants checked, without offering them to the model unless the
   * agent lists them. This is how one plugin family builds on another without importing its files.
   */
  calls?: readonly string[];
  /**
   * Settings that decide what runs on the host (a program to launch, a browser to attach to) or
   * where the user's credentials go (an endpoint that receives a key), with the grant each needs:
   * a recipe or an agents.yaml the user has not trusted may set them only with that grant
   * (`--trust <grant>`, the user's config, or a yes at the terminal). A key may be a dotted path
   * into nested settings (`endpoints.tavily`).
   */
  settingGrants?: Readonly<Record<string, TrustGrant | SettingGrant>>;
  /**
   * The arguments permission rules can match, and how: `command` (a shell command, parsed: each
   * simple command in it must be allowed), `path` (a file, as a glob relative to the workspace),
   * `url` (a URL pattern, or `domain=` for its host), `domain` (a host name) or `text` (a glob).
   * The first is the one a pattern without `name=` is for: `bash(git status)`. Other string
   * arguments can still be named in a rule (`tool(name=glob)`) and are matched as text.
   */
  permissionArguments?: Readonly<Record<string, PermissionArgumentKind>>;
  /**
   * The result depends on the arguments alone: the tool reads and changes nothing outside the call
   * (no files, commands, network, clock or person). A replay runs such a tool for real instead of
   * answering with its recorded result, and does not compare its result with the recording.
   */
  replaySafe?: boolean;
  /**
   * What `manus doctor` checks for this tool: the programs and libraries it needs on this machine,
   * each with how to install it when missing. Called with the tool's settings; must not change
   * anything, and should finish within a few seconds.
   */
  doctor?(settings: Record<string, unknown>, context: DoctorContext): Promise<DoctorFinding[]> | DoctorFinding[];
  execute(input: Input, context: ToolContext): Promise<string | ToolResult> | string | ToolResult;
}

export type AnyToolDefinition = ToolDefinition<any>;

/** How a permission rule's pattern is matched against one argument (see `permissionArguments`). */
export type PermissionArgumentKind = 'command' | 'path' | 'url' | 'domain' | 'text';

/**
 * Identity helper for plugin authors: gives a tool object its type and nothing else. The input
 * type comes from `parameters`, written once as a literal; a tool that prefers to name its input
 * type can still pass it (`defineTool<MyInput>({...})`).
 */
export function defineTool<const Parameters extends ObjectSchema>(
  tool: ToolDefinition<SchemaInput<Parameters>> & { parameters: Parameters },
): ToolDefinition<SchemaInput<Parameters>>;
export function defineTool<Input>(tool: ToolDefinition<Input>): ToolDefinition<Input>;
export function defineTool(tool: AnyToolDefinition): AnyToolDefinition {
  return tool;
}

/** The shape every tool's `parameters` has: an object schema. */
interface ObjectSchema {
  readonly type: 'object';
  readonly properties?: Readonly<Record<string, unknown>>;
  readonly required?: readonly string[];
}
