/**
 * The one interface every sandbox implements. Code-running tools depend on this file only, so a
 * tool works the same on the host, under bubblewrap or in a Docker container.
 */
import type { Readable, Writable } from 'node:stream';
import type { ProtectedPathGuard } from './protected-path-guard.js';
import type { OutputSink } from './bounded-output.js';
import type { SourceLocation } from './errors.js';
import type { EgressCommandWatch } from './egress.js';

/** The sandbox a run's commands go to, as configured. */
export interface SandboxSettings {
  /** `auto` (the default) becomes bwrap, docker or host when a tool first needs a sandbox. */
  kind: 'auto' | 'host' | 'bwrap' | 'docker';
  network: boolean;
  /**
   * `sandbox.network: {allow: [...]}`: only these hosts (patterns as written, already checked),
   * reached through the runtime's egress proxy; `network` is then false.
   */
  allowHosts?: readonly string[];
  /** Where each of `allowHosts` was written. */
  allowHostLocations?: readonly SourceLocation[];
  options: Record<string, unknown>;
}

/** A sandbox that can be created; `auto` is resolved to one of these first. */
export type SandboxKind = Exclude<SandboxSettings['kind'], 'auto'>;

/** An argument vector run as is, or a shell command line run with `sh -c`. */
export type SandboxCommand = string[] | string;

export interface SandboxCommandOptions {
  /** Working folder relative to the workspace; the workspace itself when omitted. */
  cwd?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Written to the command's standard input, which is then closed. Without it the input is empty. */
  stdin?: string | Buffer;
  /** Added to the sandbox's environment for this command. */
  env?: Record<string, string>;
  /** Most bytes of each stream kept in memory; the middle of longer output is dropped. */
  outputLimitBytes?: number;
  /** Receive every byte of each stream as it arrives, the middle included (a file holding the full output). */
  outputSinks?: { stdout?: OutputSink; stderr?: OutputSink };
}

export interface SandboxCommandResult {
  stdout: Buffer;
  stderr: Buffer;
  /** Null when the command was ended by a signal. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
  /** Bytes dropped from the middle of each stream to stay within `outputLimitBytes`. */
  omittedBytes: { stdout: number; stderr: number };
}

export interface SandboxSessionOptions {
  cwd?: string;
  env?: Record<string, string>;
  /**
   * Host folders the session must see, read-only, where the sandbox would otherwise hide them (its
   * own /tmp): the folder of an MCP server a recipe declares. Sandboxes that show the host's files
   * already, or none of them, leave this alone.
   */
  readOnlyFolders?: string[];
  /**
   * Of `readOnlyFolders`, those the session's user must reach and open even where the host's
   * permission bits would refuse it (a root runtime's sandbox user and a folder under root's home):
   * the folders the user chose to run from. Their entries keep their own bits.
   */
  openedFolders?: string[];
}

export interface SessionExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

/** A long-lived process (a shell, an interpreter) that the caller talks to through its pipes. */
export interface SandboxSession {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Settles when the session's process has exited; never rejects. */
  readonly exited: Promise<SessionExit>;
  readonly running: boolean;
  /** Kills the session's process and everything it started, and waits until it has exited. */
  kill(): Promise<void>;
}

export interface Sandbox {
  readonly kind: SandboxKind;
  /** Absolute path of the workspace as commands inside the sandbox see it. */
  readonly workspacePath: string;
  /** Runs one command to completion; anything it left running is killed when it exits. */
  run(command: SandboxCommand, options: SandboxCommandOptions): Promise<SandboxCommandResult>;
  spawnSession(command: SandboxCommand, options?: SandboxSessionOptions): Promise<SandboxSession>;
  /**
   * Makes files the host created since the last command writable inside the sandbox, where the
   * sandbox runs as another user. Sessions call it before each exchange; `run` does it itself.
   */
  refreshWorkspaceAccess(): Promise<void>;
  /**
   * What follows a command: ownership of what it changed goes back to the workspace's owner and,
   * in the run's sandbox, the protected paths are checked (a change is undone and stops the run
   * with a PermissionDeniedError). Sessions call it after each exchange; `run` does it itself.
   */
  afterCommand(): Promise<void>;
  /** Kills every process and session and removes what the sandbox created (containers, folders). */
  dispose(): Promise<void>;
}

/** The run's egress proxy, for a sandbox whose commands may reach only named hosts. */
export interface SandboxEgress {
  /** The proxy's Unix sockets on the host, bound into the sandbox. */
  httpSocket: string;
  socksSocket: string;
  watchCommand(command: string): EgressCommandWatch;
}

/** What `createSandbox` needs besides the settings from YAML. */
export interface SandboxPlacement {
  /** Set when the run may reach only named hosts: commands reach them through this proxy alone. */
  egress?: SandboxEgress;
  workspace: string;
  runDirectory: string;
  runId: string;
  /** Mounted read-only where the sandbox can, and checked after each command by the run's sandbox. */
  protectedPaths?: ProtectedPathGuard;
}
