/**
 * For tests of the browser tool: a fresh tool context per test, with the tool's settings, and a
 * way to call an action in it. Contexts are disposed after each test (see useToolContexts).
 */
import browserUse from '../../plugins/browser/browser_use.js';
import type { ToolResult } from '../../runtime/contract/tool.js';
import { useToolContexts, type TestToolContext } from './tool-context.js';

export function useBrowserTool() {
  const newContext = useToolContexts();
  return {
    newContext,
    browserContext: (settings: Record<string, unknown> = {}): TestToolContext => newContext({ settings }),
    act: async (test: TestToolContext, input: Record<string, unknown>): Promise<ToolResult> =>
      (await browserUse.execute(input as never, test.context)) as ToolResult,
  };
}
