/**
 * Keeps tool output within what a model should read while losing nothing: output over the limit
 * is shortened to its head and tail, and the full output is saved under the run's folder with its
 * path named in the shortened text. Byte output is decoded only near the two ends, so a very
 * large output costs a file write, not a string of its whole size.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { truncateMiddle } from './truncate.js';

export interface LimitOutputOptions {
  /** Most characters the returned text may hold. */
  limit: number;
  /** The run's folder; full outputs go to its `outputs/` subfolder. */
  runDirectory: string;
  /** Names the saved file, for example the tool's name. */
  label: string;
}

export interface LimitedOutput {
  text: string;
  truncated: boolean;
  /** Absolute path of the file holding the full output, when it was shortened. */
  savedPath?: string;
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

  const savedPath = await saveFullOutput(output, options);
  const head = decodeBytes(output.subarray(0, window));
  const tail = decodeBytes(output.subarray(output.length - window));
  const marker = (omittedBytes: number) =>
    `\n[... about ${omittedBytes} of ${output.length} bytes omitted; full output saved to ${savedPath} ...]\n`;
  const budget = Math.max(0, options.limit - marker(output.length).length);
  const headText = cutBefore(head, Math.ceil(budget * 0.6));
  const tailText = cutAfter(tail, budget - headText.length);
  const omittedBytes = output.length - Buffer.byteLength(headText) - Buffer.byteLength(tailText);
  return { text: headText + marker(omittedBytes) + tailText, truncated: true, savedPath };
}

async function limitText(text: string, original: string | Buffer, options: LimitOutputOptions): Promise<LimitedOutput> {
  if (options.limit <= 0 || text.length <= options.limit) return { text, truncated: false };
  const savedPath = await saveFullOutput(original, options);
  const shortened = truncateMiddle(text, options.limit, `full output saved to ${savedPath}`);
  return { text: shortened.text, truncated: true, savedPath };
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

async function saveFullOutput(output: string | Buffer, options: LimitOutputOptions): Promise<string> {
  const folder = join(options.runDirectory, 'outputs');
  await mkdir(folder, { recursive: true });
  const safeLabel = options.label.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[-.]+/, '') || 'output';
  const timestamp = new Date().toISOString().replace(/[:.]/g, '-');
  const path = join(folder, `${safeLabel}-${timestamp}-${randomBytes(3).toString('hex')}.txt`);
  await writeFile(path, output);
  return path;
}
