import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../runtime/services/model/token-counter.js';
import { classifyProviderFailure, retryDelay } from '../runtime/services/model/retry-policy.js';
import { readModelProfile } from '../runtime/runs/recipe/load-agents.js';
import { StuckDetector, turnSignature } from '../runtime/kernel/stuck-detector.js';
import { parseToolArguments, repairJson } from '../runtime/kernel/tool-arguments.js';
import { RunResourceRegistry } from '../runtime/services/run-resources.js';
import { truncateMiddle } from '../runtime/contract/truncate.js';
import type { ChatMessage } from '../runtime/contract/tool.js';

describe('token counting', () => {
  it('counts with the model family\'s encoding', () => {
    expect(new TokenCounter('gpt-3.5-turbo').countText('hello world')).toBe(2);
    expect(new TokenCounter('gpt-4o').countText('hello world')).toBe(2);
    expect(new TokenCounter('gpt-4o').countText('')).toBe(0);
  });

  it('counts each message once, by identity', () => {
    const counter = new TokenCounter('gpt-4o');
    const message: ChatMessage = { role: 'user', content: 'one two three' };
    const first = counter.countMessage(message);
    expect(first).toBe(4 + 3);
    // Messages are never edited once in history; a changed one still reports the cached count.
    (message as { content: string }).content = 'a much longer text than before, with many more tokens';
    expect(counter.countMessage(message)).toBe(first);
    expect(counter.countMessage({ role: 'user', content: message.content })).toBeGreaterThan(first);
  });

  it('counts tool calls and images', () => {
    const counter = new TokenCounter('gpt-4o');
    const call: ChatMessage = { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'echo', arguments: '{"text":"hi"}' } }] };
    expect(counter.countMessage(call)).toBeGreaterThan(4);
    const image: ChatMessage = { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] };
    expect(counter.countMessage(image)).toBe(4 + 765);
  });
});

describe('retry policy', () => {
  const headers = (values: Record<string, string>) => ({ get: (name: string) => values[name] ?? null });

  it('classifies provider failures', () => {
    expect(classifyProviderFailure({ status: 429, headers: headers({ 'retry-after': '2' }) })).toMatchObject({ kind: 'rate_limited', retryable: true, retryAfterMs: 2000 });
    expect(classifyProviderFailure({ status: 429, headers: headers({ 'retry-after-ms': '150' }) }).retryAfterMs).toBe(150);
    expect(classifyProviderFailure({ status: 502 })).toMatchObject({ kind: 'server_error', retryable: true });
    expect(classifyProviderFailure({ status: 401 })).toMatchObject({ kind: 'authentication', retryable: false });
    expect(classifyProviderFailure({ status: 400, message: "This model's maximum context length is 8192 tokens" })).toMatchObject({ kind: 'context_too_long', retryable: false });
    expect(classifyProviderFailure({ status: 422 })).toMatchObject({ kind: 'bad_request', retryable: false });
    expect(classifyProviderFailure({ message: 'fetch failed', cause: { code: 'ECONNREFUSED' } })).toMatchObject({ kind: 'unreachable', retryable: true });
  });

  it('reads Retry-After given as an HTTP date', () => {
    const inTwoSeconds = new Date(Date.now() + 2000).toUTCString();
    const delay = classifyProviderFailure({ status: 429, headers: headers({ 'retry-after': inTwoSeconds }) }).retryAfterMs!;
    expect(delay).toBeGreaterThan(500);
    expect(delay).toBeLessThanOrEqual(2000);
  });

  it('backs off exponentially with jitter, within the cap, and stops after the attempts', () => {
    const settings = { ...readModelProfile('default').retry, baseDelayMs: 100, maxDelayMs: 1000, maxAttempts: 5 };
    const failure = classifyProviderFailure({ status: 500 });
    expect(retryDelay(failure, 1, settings, () => 0)).toBe(50);
    expect(retryDelay(failure, 1, settings, () => 1)).toBe(100);
    expect(retryDelay(failure, 3, settings, () => 1)).toBe(400);
    expect(retryDelay(failure, 4, settings, () => 1)).toBe(800);
    expect(retryDelay({ ...failure }, 4, { ...settings, maxDelayMs: 300 }, () => 1)).toBe(300);
    expect(retryDelay(failure, 5, settings)).toBeUndefined();
    expect(retryDelay(classifyProviderFailure({ status: 403 }), 1, settings)).toBeUndefined();
  });
});

describe('observation truncation', () => {
  it('keeps head and tail within the limit', () => {
    const text = `${'a'.repeat(5000)}${'b'.repeat(5000)}`;
    const result = truncateMiddle(text, 1000);
    expect(result.truncated).toBe(true);
    expect(result.text.length).toBeLessThanOrEqual(1000);
    expect(result.text.startsWith('aaa')).toBe(true);
    expect(result.text.endsWith('bbb')).toBe(true);
    expect(result.omittedCharacters + result.text.length).toBeGreaterThan(text.length - 100);
  });

  it('never splits a character made of two UTF-16 units', () => {
    for (let limit = 200; limit < 260; limit += 1) {
      const { text } = truncateMiddle('😀'.repeat(400), limit);
      expect(text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    }
  });

  it('leaves short text alone', () => {
    expect(truncateMiddle('short', 100)).toEqual({ text: 'short', truncated: false, omittedCharacters: 0 });
  });
});

describe('stuck detection', () => {
  it('nudges on the third identical turn and calls the fourth stuck', () => {
    const detector = new StuckDetector(3);
    expect(['a', 'a', 'a', 'a'].map((signature) => detector.observe(signature))).toEqual(['ok', 'ok', 'nudge', 'stuck']);
  });

  it('forgives a change of approach after the nudge', () => {
    const detector = new StuckDetector(3);
    expect(['a', 'a', 'a', 'b', 'c'].map((signature) => detector.observe(signature))).toEqual(['ok', 'ok', 'nudge', 'ok', 'ok']);
  });

  it('notices two turns alternating', () => {
    const detector = new StuckDetector(3);
    const verdicts = ['a', 'b', 'a', 'b', 'a'].map((signature) => detector.observe(signature));
    expect(verdicts).toEqual(['ok', 'ok', 'ok', 'nudge', 'stuck']);
  });

  it('compares tool calls by name and canonical arguments', () => {
    expect(turnSignature(null, [{ name: 'x', arguments: { a: 1, b: [2, { c: 3, d: 4 }] } }]))
      .toBe(turnSignature('different text', [{ name: 'x', arguments: { b: [2, { d: 4, c: 3 }], a: 1 } }]));
    expect(turnSignature('same', [])).toBe(turnSignature(' same ', []));
  });
});

describe('tool-call arguments', () => {
  it('parses valid JSON as it is', () => {
    expect(parseToolArguments('{"a": 1}')).toEqual({ ok: true, value: { a: 1 }, repaired: false });
    expect(parseToolArguments('')).toEqual({ ok: true, value: {}, repaired: false });
  });

  it('rewrites what models commonly get wrong, leaving every value as sent', () => {
    const repaired = (raw: string) => JSON.parse(repairJson(raw)!);
    expect(repaired('```json\n{"a": [1, 2,],}\n```')).toEqual({ a: [1, 2] });
    expect(repaired("{'path': 'x.py'}")).toEqual({ path: 'x.py' });
    expect(repaired("{'text': 'it\\'s \"quoted\"', \"b\": 'say \"hi\"'}")).toEqual({ text: 'it\'s "quoted"', b: 'say "hi"' });
    expect(repaired('{"flag": True, "none": None, "off": False}')).toEqual({ flag: true, none: null, off: false });
    expect(repaired('Sure! {"x": 1}')).toEqual({ x: 1 });
  });

  it('never changes a value inside a string', () => {
    const value = { code: "print('a', True, None); x = [1, ]; y = {'k': False, }", note: 'don\'t: True' };
    // A trailing comma outside the strings makes the text need the rewrite at all.
    const raw = JSON.stringify(value).replace(/}$/, ',}');
    expect(parseToolArguments(raw)).toEqual({ ok: true, repaired: true, value });
  });

  it('never closes what was cut off', () => {
    for (const raw of ['{"command": "rm -rf keep', '{"code": "print(1)", "nested": {"a": [1', '{"a": 1', "{'text': 'unterminated", '```json\n{"a": "b']) {
      expect(parseToolArguments(raw)).toMatchObject({ ok: false });
    }
    expect(repairJson('{"command": "rm -rf keep')).toBeUndefined();
  });

  it('refuses a single-quoted escape whose meaning differs from JSON', () => {
    expect(parseToolArguments("{'path': 'a\\/b'}")).toMatchObject({ ok: false });
    expect(parseToolArguments("{'text': '\\x41'}")).toMatchObject({ ok: false });
  });

  it('gives up on text that is not JSON-like', () => {
    expect(parseToolArguments('call echo with hello')).toMatchObject({ ok: false });
    expect(parseToolArguments('[1, 2]')).toMatchObject({ ok: false, error: 'arguments must be a JSON object' });
  });
});

describe('run resources', () => {
  it('dispose one made with the help of another before it, and the rest in reverse order', async () => {
    const resources = new RunResourceRegistry();
    const disposed: string[] = [];
    const make = (name: string) => resources.get(name, () => name, () => {
      disposed.push(name);
    });
    await make('browser');
    // The server asks for the sandbox while it is being made, as an MCP server started in it does.
    await resources.get('server', async () => {
      await make('sandbox');
      return 'server';
    }, () => {
      disposed.push('server');
    });
    expect(await resources.disposeAll()).toEqual([]);
    expect(disposed).toEqual(['server', 'sandbox', 'browser']);
  });

  it('forget a failed creation, so the next request tries again', async () => {
    const resources = new RunResourceRegistry();
    await expect(resources.get('flaky', () => Promise.reject(new Error('not yet')))).rejects.toThrow('not yet');
    expect(await resources.get('flaky', () => 'made')).toBe('made');
  });
});
