/**
 * What `manus validate` says about a `permissions:` block: a rule naming a tool that no source gives,
 * an argument the tool does not have, or a pattern that can never match its argument, each with its
 * place in the file and a "did you mean". Rules for MCP servers' and called agents' tools are
 * checked by name only: their tools are known once the servers start.
 */
import type { Diagnostic } from '../../contract/errors.js';
import { didYouMean } from '../../contract/did-you-mean.js';
import type { AnyToolDefinition } from '../../contract/tool.js';
import { parsePermissionRule, ruleNamesTool } from '../../config/permission-rules.js';
import type { PermissionSettings } from '../../config/types.js';
import { argumentPatternProblem } from './argument-patterns.js';
import { schemaProperties, targetOf } from './permission-decision.js';
import { shellPatternProblem } from './shell-command-rules.js';

export interface RuleCheckInput {
  settings: PermissionSettings;
  /** Who wrote the block, for messages: "agent 'swe'", "the recipe". */
  source: string;
  /** Every tool a run could offer, by name. */
  tools: ReadonlyMap<string, AnyToolDefinition>;
  /** Tools known by name only (MCP servers' `mcp_<server>_*`, called agents' `agent_<name>`). */
  knownByName: (name: string) => boolean;
}

export function permissionRuleDiagnostics(input: RuleCheckInput): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const list of ['allow', 'ask', 'deny'] as const) {
    input.settings[list].forEach((text, index) => {
      const location = input.settings.locations?.[list][index];
      const problem = ruleProblem(text, input);
      // A rule for a tool no source gives decides nothing: worth a word, not a refusal.
      if (problem) diagnostics.push({ severity: problem.unknownTool ? 'warning' : 'error', message: `${input.source}: permissions.${list}: ${problem.message}`, location });
    });
  }
  return diagnostics;
}

function ruleProblem(text: string, input: RuleCheckInput): { message: string; unknownTool?: boolean } | undefined {
  const rule = parsePermissionRule(text);
  if ('problem' in rule) return { message: rule.problem };
  const named = [...input.tools.values()].filter((tool) => ruleNamesTool(rule, tool.name));
  if (named.length === 0) {
    if (rule.tool.includes('*') || input.knownByName(rule.tool)) return undefined;
    return { message: `'${text}' names no tool this run can offer${didYouMean(rule.tool, input.tools.keys())}`, unknownTool: true };
  }
  if (rule.pattern === undefined) return undefined;
  for (const tool of named) {
    const problem = patternProblem(rule, tool);
    if (problem) return { message: `'${text}': ${problem}` };
  }
  return undefined;
}

function patternProblem(rule: Exclude<ReturnType<typeof parsePermissionRule>, { problem: string }>, tool: AnyToolDefinition): string | undefined {
  const target = targetOf(rule, tool);
  if (!target) {
    const known = [...new Set([...Object.keys(tool.permissionArguments ?? {}), ...Object.keys(schemaProperties(tool))])];
    if (rule.named && known.length > 0) return `${tool.name} has no argument '${rule.named.argument}'${didYouMean(rule.named.argument, known)}`;
    return `${tool.name} declares no argument a pattern is for; name one, as in ${tool.name}(${known[0] ?? 'argument'}=...)`;
  }
  if (target.reading === 'command') return shellPatternProblem(target.pattern);
  if (target.reading === 'redirection') return undefined;
  return argumentPatternProblem(target.reading, target.pattern);
}
