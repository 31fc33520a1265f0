/**
 * Readable progress on stderr: one line per tool call and its result, retries, and the end of the
 * run. Plain lines when stderr is not a terminal (CI logs), dim colours when it is. Secrets are
 * hidden, in streamed text too, where one may arrive split across two pieces. Every value taken
 * from an event passes through `terminalText` before the reporter adds its own colours.
 */
import { connectionAsker } from './event-fields.js';
import { describeCacheHits, type TokenUsage } from '../contract/token-usage.js';
import type { RunEventListener } from './run-trace.js';
import type { SecretRedactor } from './secret-redaction.js';
import { terminalText } from './terminal-text.js';

export interface ProgressOptions {
  write: (text: string) => void;
  color: boolean;
  maxSteps: number;
  /** Show the model's text as it streams in (on a terminal), instead of one line per reply. */
  liveText: boolean;
  redactor: SecretRedactor;
}

export interface ProgressReporter {
  onEvent: RunEventListener;
  onTextDelta?: (text: string) => void;
}

const lineWidth = 160;

export function createProgressReporter(options: ProgressOptions): ProgressReporter {
  const paint = (code: string, text: string) => (options.color ? `\u001b[${code}m${text}\u001b[0m` : text);
  const dim = (text: string) => paint('2', text);
  const line = (text: string) => options.write(`${options.redactor.redact(text)}\n`);
  // A flow's steps run side by side: each line names the step path (`research/lisbon`) it belongs to.
  const stepLabel = (data: Record<string, unknown>) => `[${typeof data.path === 'string' && data.path ? `${shown(data.path)} ` : ''}step ${shown(data.step)}/${options.maxSteps}]`;
  const streamedText = options.redactor.stream();
  let streaming = false;
  const onTextDelta = (text: string) => {
    streaming = true;
    const shown = streamedText.push(terminalText(text));
    if (shown) options.write(dim(shown));
  };
  const onEvent: RunEventListener = (type, data) => {
    // Any event ends a piece of streamed text: show what was held back in case a secret began there.
    const heldBack = streamedText.end();
    if (heldBack) options.write(dim(heldBack));
    if (streaming && type !== 'model-request') {
      streaming = false;
      options.write('\n');
    }
    switch (type) {
      case 'run-start': {
        const recipe = data.recipe as { name: string };
        line(dim(`run ${shown(data.runId)}: recipe '${shown(recipe.name)}', agent '${shown(data.agent)}'${modelPhrase(data.model)}`));
        break;
      }
      case 'tool-call-start':
        line(`${stepLabel(data)} ${shown(data.tool)}(${oneLine(argumentsText(data.arguments), 100)})`);
        break;
      case 'tool-call-end': {
        const label = data.isError ? paint('31', 'error') : paint('32', 'ok');
        line(`  ${label} ${dim(oneLine(shown(data.content ?? ''), lineWidth))}`);
        break;
      }
      case 'model-response':
        // Live text has shown it already; otherwise the reply's text gets a line, also when it comes with calls.
        if (!options.liveText && typeof data.content === 'string' && data.content.trim() !== '') {
          line(`${stepLabel(data)} ${dim(oneLine(data.content, lineWidth))}`);
        }
        break;
      case 'compaction-failed':
        line(paint('33', `warning: summarising older history failed (${oneLine(String((data.error as { message?: unknown } | undefined)?.message), 120)}); dropping the oldest turns instead`));
        break;
      case 'human-input-needed':
        line(paint('33', `${stepLabel(data)} the agent asks "${oneLine(shown(data.question), lineWidth)}", and no one can answer here`));
        break;
      case 'permission-needed':
        line(paint('33', `${stepLabel(data)} ${shown(data.tool)} needs approval (${oneLine(shown(data.reason), lineWidth)}), and no one can approve it here`));
        break;
      case 'permission-decided':
        if (data.decision === 'deny') line(paint('33', `  denied ${shown(data.tool)}: ${oneLine(shown(data.reason ?? data.rule ?? ''), lineWidth)}`));
        else if (data.by !== 'rules') line(dim(`  ${shown(data.tool)} approved${data.forRun ? ' for the rest of the run' : ''}`));
        break;
      case 'model-retry':
        line(paint('33', `  retrying the model request in ${(Number(data.delayMs) / 1000).toFixed(1)} s (${oneLine(shown(data.reason), 120)})`));
        break;
      case 'profile-switch':
        line(paint('33', `  the model profile ${shown(data.from)} gave way to ${shown(data.to)} (${oneLine(String(data.reason), 120)})`));
        break;
      case 'model-rate-wait':
        line(paint('33', `  the model request waited ${(Number(data.waitMs) / 1000).toFixed(1)} s for the profile's rate limit (${shown(data.limit)})`));
        break;
      case 'run-warning':
        line(paint('33', `warning: ${shown(data.message)}`));
        break;
      case 'connection-refused':
        line(paint('33', `  ${connectionAsker(data)} was refused ${shown(data.host)}:${shown(data.port)} (${data.reason === 'private-address' ? 'a private address' : 'not in sandbox.network.allow; --trust hosts with it listed would allow it'})`));
        break;
      case 'stuck-nudge':
        line(paint('33', `${stepLabel(data)} the agent is repeating itself; asking it to change approach`));
        break;
      case 'error-streak-nudge':
        line(paint('33', `${stepLabel(data)} the last ${shown(data.failures)} tool calls failed; asking the agent to change approach`));
        break;
      case 'tool-notice':
        // A line a tool has for the user, such as the address of a page it serves.
        line(`${shown(data.tool)}: ${shown(data.message)}`);
        break;
      case 'tool-call-skipped':
        line(dim(`${stepLabel(data)} ${shown(data.tool)} skipped: an earlier call in the turn finished the run`));
        break;
      case 'tool-error-uncaught':
        line(paint('33', `warning: ${shown(data.tool)} threw after its call ended: ${oneLine(shown(data.message), 120)}`));
        break;
      case 'checks': {
        const results = Array.isArray(data.results) ? (data.results as Array<{ passed?: boolean; skipped?: boolean }>) : [];
        const passed = results.filter((result) => result.passed === true).length;
        const skipped = results.filter((result) => result.skipped === true).length;
        const failed = results.length - passed - skipped;
        const counts = `checks: ${passed} of ${results.length} passed${failed > 0 ? `, ${failed} failed` : ''}${skipped > 0 ? `, ${skipped} skipped` : ''}`;
        line(failed > 0 ? paint('31', counts) : skipped > 0 ? paint('33', counts) : paint('32', counts));
        break;
      }
      case 'run-end': {
        const usage = data.usage as TokenUsage;
        const seconds = (Number(data.durationMs) / 1000).toFixed(1);
        const cacheHits = describeCacheHits(usage);
        const cost = typeof data.cost === 'number' ? `$${data.cost.toFixed(4)}` : 'cost unknown';
        line(dim(`${shown(data.status)} after ${shown(data.steps)} step(s), ${shown(usage.totalTokens)} tokens${cacheHits ? ` (${cacheHits})` : ''}, ${cost}, ${seconds} s`));
        break;
      }
    }
  };
  return { onEvent, onTextDelta: options.liveText ? onTextDelta : undefined };
}

/** A replay has no endpoint: it names the model that was recorded, or nothing when that is unknown. */
function modelPhrase(value: unknown): string {
  const model = (value ?? {}) as { model?: string; baseUrl?: string; provider?: string };
  if (model.provider === 'recorded') return model.model && model.model !== 'recorded' ? terminalText(`, replaying model ${model.model}`) : '';
  return terminalText(`, model ${model.model ?? 'unknown'}${model.baseUrl ? ` at ${model.baseUrl}` : ''}`);
}

/** An event's value as terminal-safe text. */
function shown(value: unknown): string {
  return terminalText(String(value));
}

function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  return Object.entries((value ?? {}) as Record<string, unknown>)
    .map(([key, entry]) => `${key}=${JSON.stringify(entry)}`)
    .join(', ');
}

function oneLine(text: string, width: number): string {
  const flat = terminalText(text).replace(/\s+/g, ' ').trim();
  return flat.length <= width ? flat : `${flat.slice(0, width - 3)}...`;
}

