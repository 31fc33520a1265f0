/**
 * For tests of the browser tool: a fresh tool context per test, with the tool's settings, and a
 * way to call an action in it. Contexts are disposed after each test (see useToolContexts).
 */
import browserUse from '../../plugins/browser/browser_use.js';
import webSearch from '../../plugins/web/web_search.js';
import type { ToolResult } from '../../runtime/contract/tool.js';
import { useToolContexts, type TestToolContext } from './tool-context.js';
import { createToolNetwork } from '../../runtime/services/network/tool-network.js';

const privateAllowed = createToolNetwork({ allowPrivate: true });

export function useBrowserTool() {
  const newContext = useToolContexts();
  return {
    newContext,
    /**
     * The fixture sites are on loopback: allowed, as a user would in their configuration. The
     * browser's searches go to the real web_search tool with `webSearchSettings`, as a run's would.
     */
    browserContext: (settings: Record<string, unknown> = {}, webSearchSettings: Record<string, unknown> = {}): TestToolContext => {
      const test: TestToolContext = newContext({
        settings,
        network: privateAllowed,
        callTool: async (name, input) => {
          if (name !== webSearch.name) throw new Error(`the browser tool called '${name}', which it does not list in calls`);
          const result = await webSearch.execute(input as never, { ...test.context, settings: webSearchSettings });
          return typeof result === 'string' ? { content: result } : result;
        },
      });
      return test;
    },
    act: async (test: TestToolContext, input: Record<string, unknown>): Promise<ToolResult> =>
      (await browserUse.execute(input as never, test.context)) as ToolResult,
  };
}
