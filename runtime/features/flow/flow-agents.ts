/**
 * The agents a flow runs: those of its agent steps, and those the fields of other kinds name (a
 * plan's planner and executors). Each is an agent from agents.yaml, by name, or one written inline.
 * They are found before the run, so their tools load and their settings are checked with the recipe.
 */
import type { Diagnostic } from '../../contract/errors.js';
import { readAgentDefinition } from '../../config/agent-definition.js';
import { sandboxHostDiagnostics } from '../../services/network/sandbox-hosts.js';
import { didYouMean } from '../../contract/did-you-mean.js';
import type { AgentYaml } from '../../config/schema-types.generated.js';
import type { AgentConfig, AgentsConfig } from '../../config/types.js';
import { locate } from '../../config/yaml-source.js';
import { fieldValue } from './check-flow.js';
import { allSteps, type FlowDefinition } from '../../config/flow-definition.js';
import type { AnyStepKindDefinition } from '../../contract/step-kind.js';

export interface FlowAgentReference {
  config: AgentConfig;
  /** From agents.yaml by name, rather than written in the recipe. */
  named: boolean;
}

/**
 * Every agent the flow may run, keyed as steps refer to them: a name, or the inline agent itself
 * (the parsed agent of an agent step, the YAML object in another kind's fields).
 */
export function flowAgentReferences(
  flow: FlowDefinition,
  agents: AgentsConfig,
  stepKinds: ReadonlyMap<string, AnyStepKindDefinition>,
  diagnostics: Diagnostic[],
): Map<unknown, FlowAgentReference> {
  const references = new Map<unknown, FlowAgentReference>();
  const byName = (name: string, path: Array<string | number>) => {
    if (references.has(name)) return;
    const config = agents.agents.get(name);
    if (config) {
      references.set(name, { config, named: true });
      return;
    }
    const known = [...agents.agents.keys()];
    diagnostics.push({
      severity: 'error',
      message: `no agent named '${name}'${didYouMean(name, known)}; declared agents: ${known.join(', ') || 'none'}`,
      location: locate(flow.source, path),
    });
  };
  for (const step of allSteps(flow.steps)) {
    if (step.kind === 'agent') {
      if (typeof step.agent === 'string') byName(step.agent, [...step.yamlPath, 'agent']);
      else if (step.agent) references.set(step.agent, { config: step.agent, named: false });
      continue;
    }
    const kind = stepKinds.get(step.kind);
    for (const field of kind?.agentFields ?? []) {
      const path = [...step.yamlPath, ...field.split('.')];
      const value = fieldValue(step.fields, field);
      const values = Array.isArray(value) ? value.map((item, index) => ({ item, path: [...path, index] })) : [{ item: value, path }];
      for (const { item, path: itemPath } of values) {
        if (typeof item === 'string') byName(item, itemPath);
        else if (item && typeof item === 'object' && !references.has(item)) {
          const config = readAgentDefinition(`${step.name} ${field} (inline)`, item as AgentYaml, flow.source, itemPath, diagnostics);
          diagnostics.push(...sandboxHostDiagnostics(config.sandbox));
          references.set(item, { config, named: false });
        }
      }
    }
  }
  return references;
}
