/**
 * The tools one agent of a flow is offered: its own among the run's, MCP servers' tools included
 * as they join and change, and the structured-answer tool of its step when the step has one.
 */
import { isWildcard } from '../mcp/tool-names.js';
import type { AnyToolDefinition } from '../../contract/tool.js';
import type { Toolbox } from '../../kernel/toolbox.js';

export class AgentToolbox implements ReadonlyMap<string, AnyToolDefinition> {
  private readonly names: ReadonlySet<string>;
  private readonly prefixes: string[];

  /** `names` are the agent's (`mcp_fs_*` takes a server's all); `all` offers every tool of the run's. */
  constructor(
    private readonly source: Toolbox,
    names: readonly string[] | 'all',
    private readonly own: ReadonlyMap<string, AnyToolDefinition> = new Map(),
  ) {
    const listed = names === 'all' ? [] : names;
    this.names = new Set(listed.filter((name) => !isWildcard(name)));
    this.prefixes = names === 'all' ? [''] : listed.filter(isWildcard).map((name) => name.slice(0, -1));
  }

  /** Changes with the run's toolbox: the loop rebuilds what it sends the model only then. */
  get revision(): number {
    return this.source.revision;
  }

  private offers(name: string): boolean {
    return this.names.has(name) || this.prefixes.some((prefix) => name.startsWith(prefix));
  }

  get(name: string): AnyToolDefinition | undefined {
    return this.own.get(name) ?? (this.offers(name) ? this.source.get(name) : undefined);
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  get size(): number {
    return [...this.keys()].length;
  }

  *entries(): MapIterator<[string, AnyToolDefinition]> {
    for (const entry of this.source) if (this.offers(entry[0]) && !this.own.has(entry[0])) yield entry;
    yield* this.own;
  }

  *keys(): MapIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): MapIterator<AnyToolDefinition> {
    for (const [, tool] of this.entries()) yield tool;
  }

  [Symbol.iterator](): MapIterator<[string, AnyToolDefinition]> {
    return this.entries();
  }

  forEach(callback: (value: AnyToolDefinition, key: string, map: ReadonlyMap<string, AnyToolDefinition>) => void): void {
    for (const [name, tool] of this.entries()) callback(tool, name, this);
  }
}
