/**
 * A permission rule as written: a tool name (with `*` for any characters), optionally followed by a
 * pattern for one of its arguments in parentheses. `bash(git status)` matches the tool's main
 * argument; `str_replace_editor(path=docs/**)` names the argument; `web_fetch(domain=*.europa.eu)`
 * reads the host of a URL argument. `agent:researcher` names the tool that calls that agent.
 */

export interface PermissionRule {
  /** As written, for messages and events. */
  text: string;
  /** The tool name pattern, `agent:x` already turned into the tool's name `agent_x`. */
  tool: string;
  /** The text inside the parentheses; absent for a bare tool rule. */
  pattern?: string;
  /**
   * `name=pattern` inside the parentheses: a pattern for the argument `name` when the tool has an
   * argument of that name, else (as in `bash(FOO=1 make)`) part of a pattern for its main argument.
   */
  named?: { argument: string; pattern: string };
}

const agentPrefix = 'agent:';
const toolNamePattern = /^[A-Za-z0-9_.*@:-]+$/;
const namedArgument = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;

export function parsePermissionRule(text: string): PermissionRule | { problem: string } {
  const trimmed = text.trim();
  const open = trimmed.indexOf('(');
  if (open < 0) return toolPart(trimmed, text);
  if (!trimmed.endsWith(')')) return { problem: `'${text}' opens '(' but does not end with ')'` };
  const tool = toolPart(trimmed.slice(0, open).trim(), text);
  if ('problem' in tool) return tool;
  const inside = trimmed.slice(open + 1, -1).trim();
  if (inside === '') return { problem: `'${text}' has an empty pattern; write the tool's name alone to match every call` };
  const named = namedArgument.exec(inside);
  if (named && named[2].trim() === '') return { problem: `'${text}' names the argument '${named[1]}' but gives no pattern for it` };
  return { ...tool, pattern: inside, ...(named ? { named: { argument: named[1], pattern: named[2].trim() } } : {}) };
}

function toolPart(name: string, text: string): PermissionRule | { problem: string } {
  if (name === '') return { problem: `'${text}' names no tool` };
  if (!toolNamePattern.test(name)) return { problem: `'${text}': '${name}' is not a tool name` };
  const tool = name.startsWith(agentPrefix) ? `agent_${name.slice(agentPrefix.length)}` : name;
  return { text, tool };
}

/** Whether a rule's tool pattern names a tool: `*` stands for any characters. */
export function ruleNamesTool(rule: PermissionRule, toolName: string): boolean {
  if (!rule.tool.includes('*')) return rule.tool === toolName;
  return wildcardExpression(rule.tool).test(toolName);
}

const expressions = new Map<string, RegExp>();

/** `*` for any characters, everything else literal, the whole text. */
export function wildcardExpression(pattern: string): RegExp {
  let expression = expressions.get(pattern);
  if (!expression) {
    expression = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's');
    expressions.set(pattern, expression);
  }
  return expression;
}
