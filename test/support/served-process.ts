/**
 * For tests of the servers (`manus mcp serve`, `manus a2a serve`) run as processes: the environment
 * they get, clean-ups run after each test in reverse order, scripted models closed with them, and
 * waiting for what a server writes.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach } from 'vitest';
import { startScriptedModelServer, type ScriptedModelServer, type ScriptedTurn } from './scripted-model-server.js';

/** A server's environment: no colour, no local Ollama, a secret to look for, and the scripted model when given. */
export function servedEnvironment(secret: string, model?: ScriptedModelServer, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    NO_COLOR: '1',
    OLLAMA_HOST: '127.0.0.1:9',
    SERVICE_TOKEN: secret,
    OPENAI_API_KEY: 'test-key-for-scripted-model',
    ...(model ? { OPENAI_BASE_URL: model.baseUrl, MANUS_MODEL: 'scripted-model' } : {}),
    ...extra,
  };
}

/** Clean-ups registered during a test, run after it, the last first. */
export function useCleanups(): Array<() => Promise<void> | void> {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return cleanups;
}

export async function until(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await delay(25);
  }
}

/** A scripted model server closed after the test. */
export async function scriptedModelFor(cleanups: Array<() => Promise<void> | void>, turns: ScriptedTurn[]): Promise<ScriptedModelServer> {
  const model = await startScriptedModelServer({ turns });
  cleanups.push(() => model.close());
  return model;
}
