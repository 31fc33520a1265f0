/**
 * A flow's steps as a tree, read from its events: each `flow-step-start` adds a node under the
 * nearest step whose path its own path extends (`research/2` under `research`, `work/3` under
 * `work`), and the step's last `flow-step-end` or `flow-step-stop` says how it went. A resumed run
 * records a step again each time it runs; the last record wins.
 */
import type { RunEventRecord } from '../../runs/run-history.js';
import { numberField, recordField, textField } from '../../services/event-fields.js';

export interface FlowTreeNode {
  path: string;
  /** The path's part below its parent's: the step's name, an item's number, a plan step's number. */
  label: string;
  kind: string;
  /** The step's status, or `running` while it has no end, `stopped` when the run stopped in it. */
  status: string;
  agent?: string;
  title?: string;
  reason?: string;
  steps?: number;
  totalTokens?: number;
  /** US dollars, when the profiles have prices. */
  cost?: number;
  durationMs?: number;
  children: FlowTreeNode[];
}

export function flowTree(events: readonly RunEventRecord[]): FlowTreeNode[] {
  const nodes = new Map<string, FlowTreeNode>();
  const roots: FlowTreeNode[] = [];
  for (const event of events) {
    const path = textField(event.path);
    if (path === undefined) continue;
    if (event.type === 'flow-step-start') {
      const existing = nodes.get(path);
      if (existing) {
        existing.status = 'running';
        continue;
      }
      const parent = parentOf(path, nodes);
      const node: FlowTreeNode = {
        path,
        label: parent ? path.slice(parent.path.length + 1) : path,
        kind: textField(event.kind) ?? '?',
        status: 'running',
        ...(textField(event.agent) ? { agent: textField(event.agent) } : {}),
        ...(textField(event.title) ? { title: textField(event.title) } : {}),
        children: [],
      };
      nodes.set(path, node);
      (parent ? parent.children : roots).push(node);
    } else if (event.type === 'flow-step-end' || event.type === 'flow-step-stop') {
      const node = nodes.get(path);
      if (!node) continue;
      node.status = event.type === 'flow-step-stop' ? 'stopped' : textField(event.status) ?? '?';
      const reason = textField(event.reason);
      if (reason) node.reason = reason;
      else delete node.reason;
      node.durationMs = numberField(event.durationMs);
      node.steps = numberField(event.steps);
      node.totalTokens = numberField(recordField(event.usage)?.totalTokens);
      node.cost = numberField(event.cost);
    }
  }
  return roots;
}

function parentOf(path: string, nodes: ReadonlyMap<string, FlowTreeNode>): FlowTreeNode | undefined {
  for (let cut = path.lastIndexOf('/'); cut > 0; cut = path.lastIndexOf('/', cut - 1)) {
    const parent = nodes.get(path.slice(0, cut));
    if (parent) return parent;
  }
  return undefined;
}
