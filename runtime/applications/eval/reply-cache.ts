/**
 * An eval's cache of model replies, in the project's `.manus/eval-cache/`: each reply is kept under
 * the hash of the model, the request (messages, tools and settings) and the repeat index, so a
 * rerun whose prompts did not change asks the provider nothing, while k repeats of one row stay k
 * samples. A reply is written whole or not at all; an unreadable entry is a miss.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ChatModel, ModelReply, ModelRequest } from '../../contract/model-types.js';

export function replyCacheDirectory(cwd: string): string {
  return resolve(cwd, '.manus', 'eval-cache');
}

export interface ReplyCacheCounts {
  hits: number;
  misses: number;
}

export class ReplyCache {
  readonly counts: ReplyCacheCounts = { hits: 0, misses: 0 };

  constructor(readonly directory: string) {}

  /** The model, answering from the cache where it can; `identity` names the model under test. */
  wrap(model: ChatModel, identity: string, repeat: number): ChatModel {
    const cache = this;
    return {
      get prices() {
        return model.prices;
      },
      get hasFallbacks() {
        return model.hasFallbacks;
      },
      async complete(request: ModelRequest): Promise<ModelReply> {
        const key = requestKey(identity, request, repeat);
        const cached = cache.read(key);
        if (cached) {
          cache.counts.hits += 1;
          return { ...cached, attempts: 0, durationMs: 0 };
        }
        cache.counts.misses += 1;
        const reply = await model.complete(request);
        cache.write(key, reply);
        return reply;
      },
    };
  }

  private file(key: string): string {
    return join(this.directory, key.slice(0, 2), `${key}.json`);
  }

  private read(key: string): ModelReply | undefined {
    try {
      const stored = JSON.parse(readFileSync(this.file(key), 'utf8')) as ModelReply;
      return Array.isArray(stored.toolCalls) ? stored : undefined;
    } catch {
      return undefined;
    }
  }

  private write(key: string, reply: ModelReply): void {
    const file = this.file(key);
    const { content, toolCalls, reasoning, finishReason, usage, model, profile, cost } = reply;
    const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      mkdirSync(join(this.directory, key.slice(0, 2)), { recursive: true });
      writeFileSync(temporary, JSON.stringify({ content, toolCalls, reasoning, finishReason, usage, model, profile, cost }));
      renameSync(temporary, file);
    } catch {
      // A cache that cannot be written costs a later rerun a request, nothing more.
      rmSync(temporary, { force: true });
    }
  }
}

/** What makes a reply: the model, what was sent and which repeat asked (never the abort signal or callbacks). */
export function requestKey(identity: string, request: ModelRequest, repeat: number): string {
  const { messages, tools, toolChoice, parallelToolCalls, responseSchema } = request;
  return createHash('sha256').update(JSON.stringify({ identity, repeat, messages, tools, toolChoice, parallelToolCalls, responseSchema })).digest('hex');
}
