/**
 * What scorers need of a finished run that its outcome line does not hold: the tools it called and
 * the steps it took, read from its events, and the files it left in its workspace, read through
 * the confined file reader so that a link the run made cannot point a scorer outside.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ScoredToolCall } from '../../contract/scorer.js';
import { readConfinedFile } from '../../config/confined-file.js';

export interface RunFacts {
  toolCalls: ScoredToolCall[];
  steps: number;
  /** The workspace's folder, when the run recorded one that still exists. */
  workspace?: string;
}

export function readRunFacts(runDirectory: string | undefined, cwd: string): RunFacts {
  const facts: RunFacts = { toolCalls: [], steps: 0 };
  if (!runDirectory) return facts;
  const file = join(runDirectory, 'events.jsonl');
  if (!existsSync(file)) return facts;
  const calls = new Map<string, ScoredToolCall>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (event.type === 'run-start' && typeof event.workspace === 'string') facts.workspace = resolve(cwd, event.workspace);
    else if (event.type === 'step-end' && typeof event.step === 'number') facts.steps = Math.max(facts.steps, event.step);
    else if (event.type === 'tool-call-start') {
      const call: ScoredToolCall = { name: String(event.tool), arguments: event.arguments, isError: false };
      calls.set(String(event.callId), call);
      facts.toolCalls.push(call);
    } else if (event.type === 'tool-call-end') {
      const call = calls.get(String(event.callId));
      if (call) call.isError = event.isError === true;
    }
  }
  return facts;
}

/** A workspace file's text, or undefined when it is missing or not inside the workspace. */
export function workspaceFileReader(workspace: string | undefined): (path: string) => string | undefined {
  return (path) => {
    if (!workspace || !existsSync(workspace)) return undefined;
    try {
      return readConfinedFile(workspace, path);
    } catch {
      return undefined;
    }
  };
}
