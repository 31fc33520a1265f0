import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { limitOutput, OutputFile } from '../runtime/services/saved-output.js';

let runDirectory: string;

beforeEach(() => {
  runDirectory = realpathSync(mkdtempSync(join(tmpdir(), 'manus-output-')));
});

afterEach(() => rmSync(runDirectory, { recursive: true, force: true }));

function hasLoneSurrogate(text: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

describe('limitOutput with text', () => {
  it('returns short output unchanged and saves nothing', async () => {
    const result = await limitOutput('all of it', { limit: 100, runDirectory, label: 'bash' });
    expect(result).toEqual({ text: 'all of it', truncated: false });
    expect(() => readdirSync(join(runDirectory, 'outputs'))).toThrow();
  });

  it('keeps head and tail, names the saved file, and saves the full output there', async () => {
    const lines = Array.from({ length: 2000 }, (_, index) => `line ${index}`).join('\n');
    const result = await limitOutput(lines, { limit: 500, runDirectory, label: 'python execute' });
    expect(result.truncated).toBe(true);
    expect(result.text.length).toBeLessThanOrEqual(500);
    expect(result.text.startsWith('line 0\nline 1\n')).toBe(true);
    expect(result.text.endsWith('line 1999')).toBe(true);
    expect(result.savedPath).toBeDefined();
    expect(dirname(result.savedPath as string)).toBe(join(runDirectory, 'outputs'));
    expect(result.savedPath).toMatch(/python-execute-[^/]+\.txt$/);
    expect(result.text).toContain(`full output saved to ${result.savedPath}`);
    expect(readFileSync(result.savedPath as string, 'utf8')).toBe(lines);
  });

  it('gives each saved output its own file', async () => {
    const long = 'x'.repeat(1000);
    const first = await limitOutput(long, { limit: 200, runDirectory, label: 'bash' });
    const second = await limitOutput(long, { limit: 200, runDirectory, label: 'bash' });
    expect(first.savedPath).not.toBe(second.savedPath);
    expect(readdirSync(join(runDirectory, 'outputs'))).toHaveLength(2);
  });
});

describe('limitOutput with bytes', () => {
  it('cuts a 50 MB buffer without decoding it whole and saves every byte', async () => {
    const size = 50 * 1024 * 1024;
    const output = Buffer.alloc(size, 'a');
    output.write('BEGIN', 0);
    output.write('END', size - 3);
    const heapBefore = process.memoryUsage().heapUsed;
    const result = await limitOutput(output, { limit: 10_000, runDirectory, label: 'bash' });
    const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
    // A decoded copy of the whole buffer would add about 50 MB or more to the heap.
    expect(heapGrowth).toBeLessThan(20 * 1024 * 1024);
    expect(result.truncated).toBe(true);
    expect(result.text.length).toBeLessThanOrEqual(10_000);
    expect(result.text.startsWith('BEGIN')).toBe(true);
    expect(result.text.endsWith('END')).toBe(true);
    expect(result.text).toMatch(/about \d+ of 52428800 bytes omitted/);
    expect(statSync(result.savedPath as string).size).toBe(size);
  });

  it('never splits a multi-byte character at either cut', async () => {
    // Four-byte characters (surrogate pairs in JavaScript) and three-byte ones, so any cut lands mid-character.
    const text = '\u{1F600}\u4E2D'.repeat(200_000);
    const output = Buffer.from(text, 'utf8');
    for (const limit of [1001, 1002, 1003, 1004]) {
      const result = await limitOutput(output, { limit, runDirectory, label: 'bash' });
      expect(result.truncated).toBe(true);
      expect(result.text).not.toContain('\uFFFD');
      expect(hasLoneSurrogate(result.text)).toBe(false);
      expect(result.text.length).toBeLessThanOrEqual(limit);
    }
  });

  it('never splits a surrogate pair when cutting text', async () => {
    const result = await limitOutput('\u{1F600}'.repeat(5000), { limit: 301, runDirectory, label: 'bash' });
    expect(hasLoneSurrogate(result.text)).toBe(false);
  });

  it('decodes binary output safely: invalid sequences and NUL bytes become replacement characters', async () => {
    const binary = Buffer.from([0x50, 0x4b, 0x00, 0x03, 0xff, 0xfe, 0xc3, 0x28, 0x41]);
    const result = await limitOutput(binary, { limit: 100, runDirectory, label: 'bash' });
    expect(result.truncated).toBe(false);
    expect(result.text).not.toContain('\0');
    expect(result.text.startsWith('PK\uFFFD\u0003\uFFFD\uFFFD\uFFFD(A')).toBe(true);
  });

  it('decodes a medium buffer whole when its text fits, and saves raw bytes when it does not', async () => {
    const fits = Buffer.from('\u4E2D'.repeat(100), 'utf8');
    expect(await limitOutput(fits, { limit: 100, runDirectory, label: 'bash' })).toEqual({
      text: '\u4E2D'.repeat(100),
      truncated: false,
    });
    const binary = Buffer.concat([Buffer.from([0xff, 0x00]), Buffer.alloc(500, 'b')]);
    const result = await limitOutput(binary, { limit: 200, runDirectory, label: 'bash' });
    expect(result.truncated).toBe(true);
    expect(readFileSync(result.savedPath as string).equals(binary)).toBe(true);
  });
});

describe('the output files of one run', () => {
  it('keep no more together than one output may, and give back what a discarded one held', () => {
    const limitBytes = 1000;
    const first = new OutputFile({ runDirectory, label: 'bash', limitBytes, setting: 'tool_settings.bash.saved_output_limit_mb' });
    first.write(Buffer.alloc(700, 'a'));
    first.keep();
    const second = new OutputFile({ runDirectory, label: 'bash', limitBytes, setting: 'tool_settings.bash.saved_output_limit_mb' });
    second.write(Buffer.alloc(700, 'b'));
    expect(second.savedBytes).toBe(300);
    expect(second.notice).toContain("for one output, and for the run's saved outputs together");
    second.discard();
    const third = new OutputFile({ runDirectory, label: 'bash', limitBytes });
    third.write(Buffer.alloc(700, 'c'));
    expect(third.savedBytes).toBe(300);
    third.discard();
    const elsewhere = new OutputFile({ runDirectory: join(runDirectory, 'another-run'), label: 'bash', limitBytes });
    elsewhere.write(Buffer.alloc(700, 'd'));
    expect(elsewhere.savedBytes).toBe(700);
    elsewhere.discard();
  });
});
