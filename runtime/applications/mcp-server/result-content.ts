/**
 * Results in MCP's terms. A tool's text and images become content blocks; a run's answer becomes
 * text, its structured answer `structuredContent`, and its id goes with it so the caller can look
 * the run up or resume it. Anything that did not succeed is an `isError` result the model can act on.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RunResult } from '../../runs/run.js';
import type { ToolResult } from '../../contract/tool.js';
import { endingText } from '../../runs/run-status.js';

/** Where a recipe run's id and outcome travel in a result's `_meta`. */
export const runMetaKey = 'manus-runtime/run';

export function toolResultContent(result: ToolResult): CallToolResult {
  return {
    content: [
      { type: 'text', text: result.content },
      ...(result.images ?? []).map((image) => ({ type: 'image' as const, data: image.data, mimeType: image.mimeType })),
    ],
    ...(result.isError ? { isError: true } : {}),
  };
}

export function errorContent(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

export function runResultContent(result: RunResult): CallToolResult {
  const meta = { [runMetaKey]: { id: result.runId, status: result.status, steps: result.steps, files: result.files } };
  if (result.status !== 'success') {
    const failedChecks = result.checks.filter((check) => !check.passed && !check.skipped).map((check) => `check failed: ${check.name}: ${check.detail}`);
    return {
      content: [{ type: 'text', text: [`run ${result.runId} ended: ${endingText(result, result.answer)}`, ...failedChecks].join('\n') }],
      isError: true,
      _meta: meta,
    };
  }
  return {
    content: [
      { type: 'text', text: result.answer },
      { type: 'text', text: `run ${result.runId}: ${result.steps} steps${result.files.length > 0 ? `; files written: ${result.files.join(', ')}` : ''}` },
    ],
    ...(isObject(result.structured) ? { structuredContent: result.structured } : {}),
    _meta: meta,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
