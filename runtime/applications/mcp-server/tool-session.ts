/**
 * What the tools called over one MCP connection share, as the tools of one run do: a run folder
 * with its events, a workspace, per-session resources (shells, browsers, the sandbox), the
 * protected paths, model access and a human channel that declines, since no one at the server can
 * answer. Made on the first tool call; everything it started is disposed when the connection ends.
 */
import { loadUserConfig } from '../../runs/recipe/user-config.js';
import { createToolNetwork, type ToolNetwork } from '../../services/network/tool-network.js';
import { EgressPolicy } from '../../services/network/egress-policy.js';
import { currentToolCall } from '../../kernel/tool-fault-guard.js';
import { mkdirSync, realpathSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { sandboxDefaults } from '../../config/defaults.js';
import type { ModelProfileConfig } from '../../config/types.js';
import type { TrustGrant } from '../../contract/trust-grants.js';
import { createHumanChannel } from '../../services/human-channel.js';
import { ModelClient } from '../../services/model/model-client.js';
import { resolveModelConnection } from '../../services/model/model-connection.js';
import type { ChatModel } from '../../contract/model-types.js';
import { redactingModel } from '../../services/model/redacting-model.js';
import { RunResourceRegistry } from '../../services/run-resources.js';
import { RunTrace } from '../../services/run-trace.js';
import { newRunId, runsDirectoryFor } from '../../runs/run-preparation.js';
import { sandboxForRun } from '../../services/sandbox/run-sandbox.js';
import type { SecretRedactor } from '../../services/secret-redaction.js';
import type { AgentsConfig } from '../../config/types.js';
import type { SandboxSettings, ToolContext } from '../../contract/tool.js';
import { controlEntryRoots, ProtectedPaths } from '../../services/protected-paths/protected-paths.js';
import { WorkspaceFiles } from '../../services/workspace-files.js';
import { servedProtectedPaths, type ServedSources } from './served-protected-paths.js';

export interface ToolSessionOptions {
  cwd: string;
  environment: Record<string, string | undefined>;
  runsDirectory?: string;
  /** The profile tools that call the model use, and whose secrets are hidden. */
  profile: ModelProfileConfig;
  agentsConfig: AgentsConfig;
  redactor: SecretRedactor;
  trustGrants: ReadonlySet<TrustGrant>;
  /** The sandbox kind the user chose; `auto` when not given. */
  sandbox?: SandboxSettings['kind'];
  /** The names served, for the record. */
  tools: string[];
  /** The real path of the folder the user chose with `--workspace`; a new `workspace/<id>` otherwise. */
  workspace?: string;
  /** What the server loads, protected from its tools. */
  served: ServedSources;
}

export class ToolSession {
  readonly runId = newRunId();
  readonly runDirectory: string;
  readonly workspace: string;
  private readonly trace: RunTrace;
  private readonly resources = new RunResourceRegistry();
  private readonly protectedPaths: ProtectedPaths;
  private readonly human = createHumanChannel({ interactive: false, answers: [], recipeAnswers: {} });
  private readonly started = performance.now();
  private sandboxChoice: Promise<SandboxSettings> | undefined;
  private model: ChatModel | undefined;
  private calls = 0;
  private disposed: Promise<void> | undefined;

  constructor(private readonly options: ToolSessionOptions) {
    const runsDirectory = runsDirectoryFor(options.cwd, options.environment, options.runsDirectory);
    this.runDirectory = join(runsDirectory, this.runId);
    mkdirSync(this.runDirectory, { recursive: true });
    this.workspace = options.workspace ?? newWorkspace(options.cwd, this.runId);
    this.trace = new RunTrace(join(this.runDirectory, 'events.jsonl'), options.redactor);
    this.protectedPaths = new ProtectedPaths(
      () => servedProtectedPaths(options.agentsConfig, options.served, { cwd: options.cwd, workspace: this.workspace, runsDirectory, environment: options.environment }),
      {
        repositoryRoots: controlEntryRoots({ cwd: options.cwd, workspace: this.workspace }),
        onChanged: (changes) => this.trace.emit('protected-path-changed', { changes }),
      },
    );
    // Listed by `manus runs` as what it is: the record of a served connection, not a resumable run.
    this.trace.emit('run-start', {
      runId: this.runId,
      pid: process.pid,
      host: hostname(),
      recipe: { name: 'mcp-serve' },
      tools: options.tools,
      sandbox: options.sandbox ?? sandboxDefaults.kind,
      trust: [...options.trustGrants],
      // Relative, as a run records it: no machine paths in the record.
      workspace: relative(options.cwd, this.workspace) || '.',
    });
  }

  private network: ToolNetwork | undefined;

  /** The context of one tool call; its signal is the call's own. */
  async contextFor(tool: string, signal: AbortSignal): Promise<ToolContext> {
    await this.protectedPaths.ready();
    this.calls += 1;
    const callId = `mcp-${this.calls}`;
    const trace = this.trace;
    return {
      runId: this.runId,
      workspace: this.workspace,
      runDirectory: this.runDirectory,
      step: this.calls,
      callId,
      signal,
      logger: {
        info: (message) => trace.emit('tool-log', { level: 'info', tool, message }),
        warn: (message) => trace.emit('tool-log', { level: 'warn', tool, message }),
        debug: (message) => trace.emit('tool-log', { level: 'debug', tool, message }),
      },
      trace,
      model: {
        complete: async (messages, access) => {
          const model = await this.modelClient();
          const reply = await model.complete({ messages, responseSchema: access?.responseSchema, signal: access?.signal ?? signal });
          return reply.content ?? '';
        },
      },
      resources: this.resources,
      human: this.human,
      settings: {},
      sandboxSettings: () => this.sandboxSettings(),
      sandbox: () => sandboxForRun({ resources: this.resources, sandboxSettings: () => this.sandboxSettings(), workspace: this.workspace, runDirectory: this.runDirectory, runId: this.runId, protectedPaths: this.protectedPaths, network: this.toolNetwork(), trace }),
      network: this.toolNetwork(),
      protectedPaths: this.protectedPaths,
      files: new WorkspaceFiles(this.workspace, this.protectedPaths),
    };
  }

  /**
   * The user's configuration, as for a run; served tools act for the client's model, which is not
   * trusted. The user's network.only holds them as it holds a run: web tools, the browser and the
   * sandbox's commands reach only the hosts it names.
   */
  private toolNetwork(): ToolNetwork {
    if (this.network) return this.network;
    const access = loadUserConfig(this.options.environment).config.network;
    const egress = access.only
      ? new EgressPolicy({
        hosts: access.only,
        access,
        resources: this.resources,
        onRefused: (refusal) => this.trace.emit('connection-refused', { ...refusal }),
        currentCall: currentToolCall,
      })
      : undefined;
    return (this.network = createToolNetwork(access, egress));
  }

  /** Records a call and its outcome, as a run records its tool calls. */
  record(type: 'tool-call-start' | 'tool-call-end' | 'tool-error', data: Record<string, unknown>): void {
    this.trace.emit(type, { step: this.calls, ...data });
  }

  redact(text: string): string {
    return this.options.redactor.redact(text);
  }

  /** Disposes what the session's tools started, undoes changes to protected paths and closes the record. */
  dispose(): Promise<void> {
    this.disposed ??= this.disposeOnce();
    return this.disposed;
  }

  private async disposeOnce(): Promise<void> {
    const problems = await this.resources.disposeAll();
    for (const problem of problems) this.trace.emit('resource-dispose-failed', { problem });
    await this.protectedPaths.verify().catch((error: Error) => this.trace.emit('run-warning', { message: error.message }));
    this.trace.emit('run-end', { status: 'closed', calls: this.calls, durationMs: Math.round(performance.now() - this.started) });
    this.trace.close();
  }

  private sandboxSettings(): Promise<SandboxSettings> {
    this.sandboxChoice ??= this.chooseSandbox();
    return this.sandboxChoice;
  }

  /** As a run chooses, with no one to ask: the host only with the user's grant or `--sandbox host`. */
  private async chooseSandbox(): Promise<SandboxSettings> {
    const requested: SandboxSettings = { kind: this.options.sandbox ?? sandboxDefaults.kind, network: sandboxDefaults.network, options: {} };
    if (requested.kind !== 'auto') {
      this.trace.emit('sandbox-selected', { requested: requested.kind, kind: requested.kind, reason: `chosen with --sandbox ${requested.kind}` });
      return requested;
    }
    const { chooseAutoSandbox } = await import('../../services/sandbox/auto-sandbox.js');
    const choice = await chooseAutoSandbox(requested, { trustGrants: this.options.trustGrants });
    this.trace.emit('sandbox-selected', { requested: 'auto', kind: choice.settings.kind, reason: choice.reason });
    return choice.settings;
  }

  private async modelClient(): Promise<ChatModel> {
    if (this.model) return this.model;
    const connection = await resolveModelConnection(this.options.profile, this.options.environment, {});
    const client = new ModelClient(connection, {
      onRetry: (notice) => this.trace.emit('model-retry', { ...notice }),
      onRateWait: (notice) => this.trace.emit('model-rate-wait', { ...notice }),
    });
    this.model = redactingModel(client, this.options.redactor);
    return this.model;
  }
}

function newWorkspace(cwd: string, runId: string): string {
  const workspace = resolve(cwd, 'workspace', runId);
  mkdirSync(workspace, { recursive: true });
  return realpathSync(workspace);
}
