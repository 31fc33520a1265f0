/**
 * Keeps tool output within what a model should read while losing nothing: output over the limit
 * is shortened to its head and tail, and the full output is saved under the run's folder with its
 * path named in the shortened text. Byte output is decoded only near the two ends, so a very
 * large output costs a file write, not a string of its whole size. Commands stream their output
 * into an `OutputFile` as it arrives, since what they keep in memory drops the middle of a long
 * output; the file keeps everything up to its cap.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolError } from '../contract/errors.js';
import type { OutputSink } from '../contract/bounded-output.js';
import { truncateMiddle } from '../contract/truncate.js';

/** Most of one output a saved file keeps unless `tool_settings.<tool>.saved_output_limit_mb` says otherwise. */
export const defaultSavedOutputLimitMegabytes = 100;
const bytesPerMegabyte = 1_000_000;

export interface OutputFileOptions {
  runDirectory: string;
  /** Names the file, for example the tool's name. */
  label: string;
  /** Most bytes kept; later bytes are counted, not saved. */
  limitBytes: number;
  /** The setting that sets the limit, named when the limit is reached. */
  setting?: string;
}

/**
 * Bytes the saved outputs of each run hold, by run folder. One output's limit also bounds them all
 * together: a run of many flooding commands fills no more of the disk than one would.
 */
const savedByRun = new Map<string, number>();

/** Output this short stays in memory: most commands never need their output saved. */
const bytesHeldInMemory = 256 * 1024;

/**
 * A command's full output, written to the run's `outputs/` folder as it arrives. Short output is
 * held in memory; the file is made once the output grows past that, or when `limitOutput` keeps
 * it for output it shortened, and removed again otherwise.
 */
export class OutputFile implements OutputSink {
  readonly path: string;
  private readonly options: OutputFileOptions;
  private descriptor: number | undefined;
  private held: Buffer[] = [];
  private heldBytes = 0;
  private kept = false;
  private discarded = false;
  private closed = false;
  totalBytes = 0;
  /** Bytes taken for the file, within its limit. */
  savedBytes = 0;
  private bytesOnDisk = 0;
  /** Why the file stopped short of the limit (a full disk); the output itself is unaffected. */
  problem: string | undefined;

  constructor(options: OutputFileOptions) {
    this.options = options;
    this.path = outputPath(options.runDirectory, options.label);
  }

  write(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    const { runDirectory, limitBytes } = this.options;
    const runSaved = savedByRun.get(runDirectory) ?? 0;
    const room = Math.min(limitBytes - this.savedBytes, limitBytes - runSaved);
    if (this.closed || this.problem || room <= 0 || chunk.length === 0) return;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.savedBytes += part.length;
    savedByRun.set(runDirectory, runSaved + part.length);
    if (this.descriptor === undefined && this.heldBytes + part.length <= bytesHeldInMemory) {
      // Copied: a stream may reuse the buffer it handed over.
      this.held.push(Buffer.from(part));
      this.heldBytes += part.length;
      return;
    }
    this.flush(part);
  }

  private flush(part?: Buffer): void {
    // Called from a stream's data handler: a failure here must not become an uncaught error.
    try {
      if (this.descriptor === undefined) {
        mkdirSync(join(this.options.runDirectory, 'outputs'), { recursive: true });
        this.descriptor = openSync(this.path, 'w');
      }
      for (const bytes of [...this.held.splice(0), ...(part ? [part] : [])]) {
        let written = 0;
        while (written < bytes.length) {
          const count = writeSync(this.descriptor, bytes, written);
          written += count;
          this.bytesOnDisk += count;
        }
      }
      this.heldBytes = 0;
    } catch (error) {
      this.problem = error instanceof Error ? error.message : String(error);
    }
  }

  /** What the model is told about the file. */
  get notice(): string {
    if (this.problem) {
      const partial = this.bytesOnDisk > 0 ? `; ${this.path} holds its first ${formatBytes(this.bytesOnDisk)}` : '';
      return `the full output could not be saved (${this.problem})${partial}`;
    }
    if (this.totalBytes > this.savedBytes) {
      const setting = this.options.setting ? `, the limit set by ${this.options.setting} (for one output, and for the run's saved outputs together)` : '';
      return `the first ${formatBytes(this.savedBytes)} of ${formatBytes(this.totalBytes)} saved to ${this.path}${setting}`;
    }
    return `full output saved to ${this.path}`;
  }

  /** Keeps the file for the model to read. */
  keep(): string {
    if (!this.closed && !this.problem) this.flush();
    this.kept = true;
    this.close();
    return this.path;
  }

  /** Removes the file unless it was kept; safe to call more than once. */
  discard(): void {
    if (!this.kept && !this.discarded) {
      this.discarded = true;
      const { runDirectory } = this.options;
      savedByRun.set(runDirectory, Math.max(0, (savedByRun.get(runDirectory) ?? 0) - this.savedBytes));
    }
    this.held = [];
    this.close();
    if (this.kept || this.descriptor === undefined) return;
    try {
      unlinkSync(this.path);
    } catch {
      // Already gone, or never made.
    }
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.descriptor !== undefined) closeSync(this.descriptor);
  }
}

function formatBytes(bytes: number): string {
  if (bytes < bytesPerMegabyte) return `${bytes} bytes`;
  return `${Number((bytes / bytesPerMegabyte).toFixed(1))} MB`;
}

/** Reads `tool_settings.<tool>.saved_output_limit_mb` as a byte count. */
export function savedOutputLimitBytes(settings: Record<string, unknown>, tool: string): number {
  const value = settings.saved_output_limit_mb ?? defaultSavedOutputLimitMegabytes;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new ToolError(`tool_settings.${tool}.saved_output_limit_mb must be a number above 0.`, 'settings_invalid');
  }
  return Math.floor(value * bytesPerMegabyte);
}

export interface LimitOutputOptions {
  /** Most characters the returned text may hold. */
  limit: number;
  /** The run's folder; full outputs go to its `outputs/` subfolder. */
  runDirectory: string;
  /** Names the saved file, for example the tool's name. */
  label: string;
  /** Where the command streamed its full output; kept when the output is shortened, removed otherwise. */
  file?: OutputFile;
}

export interface LimitedOutput {
  text: string;
  truncated: boolean;
  /** Absolute path of the file holding the full output, when it was shortened. */
  savedPath?: string;
  /** Where the full output went, in words for the model, when it was shortened. */
  notice?: string;
}

/** A UTF-16 code unit never takes more than three UTF-8 bytes. */
const maximumBytesPerCodeUnit = 3;

export async function limitOutput(output: string | Buffer, options: LimitOutputOptions): Promise<LimitedOutput> {
  if (typeof output === 'string') return limitText(output, output, options);
  // Each end's window decodes to at least `limit` code units besides the at most three replacement
  // characters a character cut at its inner edge becomes, so the kept text never reaches that edge.
  const window = options.limit * maximumBytesPerCodeUnit + maximumBytesPerCodeUnit;
  // Below two windows the whole buffer is small enough to decode; the raw bytes are still what is saved.
  if (options.limit <= 0 || output.length <= window * 2) return limitText(decodeBytes(output), output, options);

  const { savedPath, notice } = await saveFullOutput(output, options);
  // The command's whole output, when it streamed it to a file; the buffer may lack its middle.
  const totalBytes = options.file?.totalBytes ?? output.length;
  const head = decodeBytes(output.subarray(0, window));
  const tail = decodeBytes(output.subarray(output.length - window));
  const marker = (omittedBytes: number) => `\n[... about ${omittedBytes} of ${totalBytes} bytes omitted; ${notice} ...]\n`;
  const budget = Math.max(0, options.limit - marker(totalBytes).length);
  const headText = cutBefore(head, Math.ceil(budget * 0.6));
  const tailText = cutAfter(tail, budget - headText.length);
  const omittedBytes = totalBytes - Buffer.byteLength(headText) - Buffer.byteLength(tailText);
  return { text: headText + marker(omittedBytes) + tailText, truncated: true, savedPath, notice };
}

async function limitText(text: string, original: string | Buffer, options: LimitOutputOptions): Promise<LimitedOutput> {
  if (options.limit <= 0 || text.length <= options.limit) {
    options.file?.discard();
    return { text, truncated: false };
  }
  const { savedPath, notice } = await saveFullOutput(original, options);
  const shortened = truncateMiddle(text, options.limit, notice);
  return { text: shortened.text, truncated: true, savedPath, notice };
}

/** Decodes UTF-8 with replacement characters for invalid sequences and for NUL bytes. */
export function decodeBytes(bytes: Buffer): string {
  return withoutNul(bytes.toString('utf8'));
}

function withoutNul(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text;
}

/** The first `length` code units, one fewer when the cut would split a surrogate pair. */
function cutBefore(text: string, length: number): string {
  const end = Math.min(length, text.length);
  return isLowSurrogate(text.charCodeAt(end)) ? text.slice(0, end - 1) : text.slice(0, end);
}

/** The last `length` code units, one fewer when the cut would split a surrogate pair. */
function cutAfter(text: string, length: number): string {
  const start = Math.max(0, text.length - length);
  return isLowSurrogate(text.charCodeAt(start)) ? text.slice(start + 1) : text.slice(start);
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

async function saveFullOutput(output: string | Buffer, options: LimitOutputOptions): Promise<{ savedPath: string; notice: string }> {
  if (options.file) return { savedPath: options.file.keep(), notice: options.file.notice };
  const path = outputPath(options.runDirectory, options.label);
  await mkdir(join(options.runDirectory, 'outputs'), { recursive: true });
  await writeFile(path, output);
  return { savedPath: path, notice: `full output saved to ${path}` };
}

function outputPath(runDirectory: string, label: string): string {
  const safeLabel = label.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[-.]+/, '') || 'output';
  const timestamp = new Date().toISOString().replace(/[:.]/g, '-');
  return join(runDirectory, 'outputs', `${safeLabel}-${timestamp}-${randomBytes(3).toString('hex')}.txt`);
}
