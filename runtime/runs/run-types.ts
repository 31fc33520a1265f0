/**
 * The shapes a run passes between its stages (prepare, attempt, finish) and gives its caller.
 * They stand apart from the stages, so each stage and a flow's steps can name them without
 * importing one another.
 */
import type { LoopOutcome, BudgetName, ResumeState, SharedBudget } from '../kernel/agent-loop.js';
import type { ApprovalGate, UnansweredApproval } from '../services/permissions/approval-gate.js';
import type { FinalAnswerSchema } from '../kernel/final-answer.js';
import type { RunFaultGuard } from '../kernel/tool-fault-guard.js';
import type { Toolbox, ToolWrapper } from '../kernel/toolbox.js';
import type { CheckResult } from '../config/check-types.js';
import type { ChatModel, TokenUsage } from '../contract/model-types.js';
import type { StepStatus } from '../contract/step-kind.js';
import type { HumanChannel, SandboxSettings } from '../contract/tool.js';
import type { AttemptsResult } from '../features/checks/check-attempts.js';
import type { ModelConnection } from '../services/model/model-connection.js';
import type { UsageLedger } from '../services/model/usage-ledger.js';
import type { ProtectedPaths } from '../services/protected-paths/protected-paths.js';
import type { RunResourceRegistry } from '../services/run-resources.js';
import type { RunEventListener, RunTrace } from '../services/run-trace.js';
import type { WorkspaceSnapshot } from '../services/sandbox/workspace-changes.js';
import type { ToolNetwork } from '../services/network/tool-network.js';
import type { SecretRedactor } from '../services/secret-redaction.js';
import type { FlowResume } from './flow/flow-resume.js';
import type { RunStatus } from './run-status.js';
import type { HumanAsker } from '../services/human-channel.js';

export interface RunResult {
  runId: string;
  status: RunStatus;
  answer: string;
  structured?: unknown;
  /** The last attempt's check results (skipped ones when the agent did not succeed). */
  checks: CheckResult[];
  /** Attempts made, counting the first. */
  attempts: number;
  /** ISO 8601 time the run (or this resumption of it) started. */
  startedAt: string;
  steps: number;
  usage: TokenUsage;
  /** US dollars, when the model profile has prices. */
  cost?: number;
  exhaustedBudget?: BudgetName;
  /** The error that ended the run; its code is stable, for callers to act on. */
  error?: { code: string; message: string };
  /** The question the run stopped on when its status is `needs-input`. */
  question?: string;
  model: string;
  runDirectory: string;
  workspace: string;
  /** Workspace-relative paths of files written during the run. */
  files: string[];
  durationMs: number;
  /** A flow's steps, in the order they ended, each with its path and status. */
  flowSteps?: FlowStepRecord[];
}

export interface RunOptions {
  cwd: string;
  environment: Record<string, string | undefined>;
  signal: AbortSignal;
  runsDirectory?: string;
  interactive: boolean;
  answers?: string[];
  /** Asks the person the run works for when it is not the terminal (a served recipe's client). */
  asker?: HumanAsker;
  onEvent?: RunEventListener;
  onTextDelta?: (text: string) => void;
  /** Continue an earlier run in its own folder and workspace, from its recorded history (a flow's, from each step's). */
  resume?: { runId: string; runDirectory: string; workspace: string; state: ResumeState; flow?: FlowResume; runApprovals?: string[] };
  /** Answers instead of the provider: recorded replies, when replaying a run. */
  model?: ChatModel;
  /** Wraps the profile's model once connected (an eval's cache of replies); the connection is still recorded. */
  wrapModel?: (model: ChatModel) => ChatModel;
  /** Extra fields for the run-start event (a replay names what it replays), or the run-resume event. */
  startDetails?: Record<string, unknown>;
  /** Extra fields for the run-end event, from the result (the CLI records the exit code it gives the run). */
  endDetails?: (result: RunResult) => Record<string, unknown>;
  /** Also write every event to this file: a self-contained recording. */
  recordFile?: string;
  /** Hides the run's secrets; built from the profile and environment when not given. */
  redactor?: SecretRedactor;
  /** A folder the workspace starts as a copy of (relative to `cwd`); recorded so a replay can do the same. */
  workspaceSource?: string;
  /** Wraps every tool the run offers, those that join while it runs (MCP servers' tools) included. */
  wrapTool?: ToolWrapper;
  /** A budget shared with other runs (a batch's totals): told what this run spends, and it stops when the budget is gone. */
  sharedBudget?: SharedBudget;
  /**
   * The runs folder was swept already for the commands killed runtimes left running (a batch sweeps
   * its own once, before its first item); otherwise the run sweeps it as it starts.
   */
  leftoversSwept?: boolean;
  /**
   * A call that needs approval with no one to ask: `stop` the run, resumable with the call pending
   * (the default), or `deny` it with a reason the model sees (batch workers, `manus mcp serve`).
   */
  unansweredApproval?: UnansweredApproval;
  /** The user's decisions about the calls a resumed run stopped on, by call id (`--approve`, `--deny`). */
  approvalDecisions?: ReadonlyMap<string, { approved: boolean; reason?: string }>;
}

/** The run's place and services, from its start to its result. */
export interface PreparedRun {
  runId: string;
  runsDirectory: string;
  runDirectory: string;
  /** The workspace's real path. */
  workspace: string;
  /** The folder the workspace started as a copy of, when there is one. */
  workspaceSource?: string;
  /** What the workspace held when the run started, so the result lists only what the run wrote. */
  workspaceBefore: Promise<WorkspaceSnapshot>;
  /** `performance.now()` and wall-clock time when the run (or this resumption of it) started. */
  started: number;
  startedAt: Date;
  redactor: SecretRedactor;
  trace: RunTrace;
  resources: RunResourceRegistry;
  /** Turns a tool's stray asynchronous error into its call's error result instead of ending the process. */
  faults: RunFaultGuard;
  /** What the loop had done when an error cut it short: its last finished step. */
  progress(): { step: number; usage?: TokenUsage };
  /** The sandbox for commands, chosen on first use, so runs that execute no code never probe for one. */
  sandboxSettings(): Promise<SandboxSettings>;
  /** What the runtime, git or a shell would later load or run on the host; kept as it is now. */
  protectedPaths: ProtectedPaths;
  /** The network as the user allows the run's tools and MCP clients to reach it. */
  network: ToolNetwork;
  /** How questions reach a person: shared by the tools and the MCP servers' requests, so answers are used in order. */
  human: HumanChannel;
  /** Answers the calls the permissions ask about, for every agent of the run. */
  approvals: ApprovalGate;
  /** Tokens spent for the run outside the loop's requests (MCP sampling); the loop counts them. */
  outsideUsage: UsageLedger;
}

/** The model the run talks to, and the connection behind it unless the caller gave the model. */
export interface RunModel {
  model: ChatModel;
  connection?: ModelConnection;
}

/** The tools the agent is offered: the plan's, and the structured-answer tool when the recipe wants one. */
export interface RunToolbox {
  /** MCP servers add their tools as they start and change them later. */
  tools: Toolbox;
  responseSchema?: FinalAnswerSchema;
}

export type TaskAttempts = AttemptsResult<LoopOutcome>;

/** One step's record, as `--json`, reports and `runs show` give it. */
export interface FlowStepRecord {
  path: string;
  kind: string;
  status: StepStatus;
  answer: string;
  reason?: string;
  steps: number;
  usage: TokenUsage;
  durationMs: number;
}
