import { describe, expect, it } from 'vitest';
import { exitCodeForError, exitCodeForRun, exitCodeForStatus } from '../cli/exit-codes.js';
import {
  ConfigError,
  HumanInputNeededError,
  InterruptedError,
  ManusError,
  PermissionDeniedError,
  PluginLoadError,
  ProviderError,
  ToolError,
  UsageError,
} from '../runtime/contract/errors.js';
import { RecordingExhaustedError } from '../runtime/runs/replay.js';
import { McpServerUnavailableError } from '../runtime/features/mcp/mcp-errors.js';
import { RunLookupError } from '../runtime/runs/run-history.js';
import type { RunStatus } from '../runtime/runs/run-status.js';
import { RunTraceError } from '../runtime/services/run-trace.js';
import { useInProcessRuns } from './support/in-process-loop.js';

const run = useInProcessRuns();

describe('exit codes', () => {
  it('gives each way a run ends the exit code the CLI promises', () => {
    const expected: Record<RunStatus, number> = {
      success: 0,
      failure: 1,
      stuck: 1,
      'checks-failed': 1,
      'budget-exhausted': 3,
      'provider-failed': 4,
      'permission-denied': 5,
      'needs-input': 5,
      'tool-source-failed': 6,
      interrupted: 130,
      error: 1,
    };
    for (const [status, code] of Object.entries(expected)) expect(exitCodeForStatus(status as RunStatus), status).toBe(code);
    expect(exitCodeForRun({ status: 'error', error: { code: 'config_invalid' } })).toBe(2);
    expect(exitCodeForRun({ status: 'error', error: { code: 'internal_error' } })).toBe(1);
  });

  it('gives an error that stops a command the exit code of its kind', () => {
    const cases: Array<[unknown, number]> = [
      [new ConfigError([{ severity: 'error', message: 'bad key' }]), 2],
      [new UsageError('--tools must be recorded or real'), 2],
      [new PluginLoadError('no default export'), 2],
      [new RunLookupError('run_not_found', 'unknown run'), 2],
      [new RunLookupError('run_ambiguous', 'two runs match'), 2],
      [new ProviderError('authentication', 'the key was rejected'), 4],
      [new PermissionDeniedError('not allowed'), 5],
      [new HumanInputNeededError('Which city?'), 5],
      [new McpServerUnavailableError("the MCP server 'fs' could not be started"), 6],
      [new InterruptedError(), 130],
      [new ToolError('the file does not exist', 'file_not_found'), 1],
      [new RunTraceError('events.jsonl', new Error('disk full')), 1],
      [new RecordingExhaustedError(3), 1],
      [new ManusError('internal_error', 'a bug'), 1],
      [new Error('not one of ours'), 1],
      [Object.assign(new Error('looks like a usage error'), { code: 'usage', exitCode: 2 }), 1],
    ];
    for (const [error, code] of cases) expect(exitCodeForError(error), String(error)).toBe(code);
  });

  it('leaves exit codes out of an embedded run\'s result and events, which say its status and error code', async () => {
    const finished = await run([{ content: 'The answer.' }]);
    expect(finished.result).toMatchObject({ status: 'success', answer: 'The answer.' });
    const failed = await run([{ error: new ProviderError('authentication', 'The API key was rejected.') }]);
    expect(failed.result).toMatchObject({ status: 'provider-failed', error: { code: 'provider_authentication' } });
    for (const { result, events } of [finished, failed]) {
      expect(result).not.toHaveProperty('exitCode');
      expect(events.at(-1)).toMatchObject({ type: 'run-end', status: result.status });
      expect(events.at(-1)).not.toHaveProperty('exitCode');
    }
  });
});
