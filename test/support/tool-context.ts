import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { sandboxForRun } from '../../runtime/services/sandbox/run-sandbox.js';
import type { ToolContext } from '../../runtime/contract/tool.js';
import { createToolNetwork } from '../../runtime/services/network/tool-network.js';
import { WorkspaceFiles } from '../../runtime/services/workspace-files.js';

/**
 * A real ToolContext for calling a tool's `execute` directly in unit tests: real folders, a
 * resource registry that disposes on `dispose()`, and a human channel answering from a list.
 */
export function createTestToolContext(overrides: Partial<ToolContext> & { answers?: string[] } = {}) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-tool-')));
  const workspace = overrides.workspace ?? join(root, 'workspace');
  const runDirectory = overrides.runDirectory ?? join(root, 'run');
  for (const folder of [workspace, runDirectory]) mkdirSync(folder, { recursive: true });
  const resources = new Map<string, { value: unknown; dispose?: (value: any) => void | Promise<void> }>();
  const events: Array<{ type: string; data: Record<string, unknown> }> = [];
  const answers = [...(overrides.answers ?? [])];
  const abortController = new AbortController();
  const base: Omit<ToolContext, 'files'> = {
    runId: 'test-run',
    workspace: realpathSync(workspace),
    runDirectory,
    step: 1,
    callId: 'call_test',
    signal: abortController.signal,
    logger: { info() {}, warn() {}, debug() {} },
    trace: { emit: (type, data) => events.push({ type, data }) },
    model: { complete: async () => { throw new Error('no model in this test'); } },
    resources: {
      async get(key, create, dispose) {
        const existing = resources.get(key);
        if (existing) return existing.value as never;
        const value = await create();
        resources.set(key, { value, dispose });
        return value;
      },
      async release(key) {
        const entry = resources.get(key);
        resources.delete(key);
        if (entry?.dispose) await entry.dispose(entry.value);
      },
    },
    human: {
      async ask(question) {
        const answer = answers.shift();
        if (answer === undefined) throw new Error(`no answer scripted for: ${question}`);
        return answer;
      },
    },
    settings: {},
    sandboxSettings: async () => ({ kind: 'host', network: false, options: {} }),
    // The sandbox a run gives its tools, made from whatever settings the test's context ends up with.
    sandbox: () => sandboxForRun(context),
    // As a user with no configuration: private addresses refused.
    network: createToolNetwork(),
    ...overrides,
  };
  const context: ToolContext = { ...base, files: overrides.files ?? new WorkspaceFiles(base.workspace, base.protectedPaths) };
  return {
    context,
    root,
    events,
    abort: () => abortController.abort(),
    async dispose() {
      for (const [key, entry] of [...resources].reverse()) {
        resources.delete(key);
        if (entry.dispose) await entry.dispose(entry.value);
      }
    },
  };
}


export type TestToolContext = ReturnType<typeof createTestToolContext>;

/**
 * Registers cleanup for the calling test file and returns a context factory: every context made
 * is disposed (closing its shells, browsers and sandboxes) and its folders removed after each test.
 */
export function useToolContexts(): (overrides?: Parameters<typeof createTestToolContext>[0]) => TestToolContext {
  const created: TestToolContext[] = [];
  afterEach(async () => {
    for (const test of created.splice(0)) {
      await test.dispose();
      rmSync(test.root, { recursive: true, force: true });
    }
  });
  return (overrides) => {
    const test = createTestToolContext(overrides);
    created.push(test);
    return test;
  };
}
