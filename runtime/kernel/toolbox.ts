/**
 * The tools a run offers the model. Sources that learn their tools while the run goes on (MCP
 * servers that start, restart or change their list) add and remove entries; the loop reads the
 * revision each step and rebuilds what it sends the model only when it changed.
 */
import type { AnyToolDefinition } from '../contract/tool.js';

/** Gives each tool that joins the toolbox a wrapper: a replay compares real results with recorded ones. */
export type ToolWrapper = (tool: AnyToolDefinition) => AnyToolDefinition;

export class Toolbox extends Map<string, AnyToolDefinition> {
  private changes = 0;
  private readonly wrap: ToolWrapper;

  constructor(tools: Iterable<[string, AnyToolDefinition]> = [], wrap: ToolWrapper = (tool) => tool) {
    super();
    this.wrap = wrap;
    for (const [name, tool] of tools) super.set(name, wrap(tool));
  }

  /** Counts changes; the same number means the same tools. */
  get revision(): number {
    return this.changes;
  }

  override set(name: string, tool: AnyToolDefinition): this {
    this.changes += 1;
    return super.set(name, this.wrap(tool));
  }

  override delete(name: string): boolean {
    const deleted = super.delete(name);
    if (deleted) this.changes += 1;
    return deleted;
  }
}

/** A plain map never changes during a run; a toolbox (or a view of one) says when it did. */
export function toolboxRevision(tools: ReadonlyMap<string, AnyToolDefinition> & { revision?: number }): number {
  return tools.revision ?? 0;
}
