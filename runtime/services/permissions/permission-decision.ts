/**
 * Decides a tool call against the run's permission policy. Each file's block answers on its own:
 * its deny rules, then its ask rules, then its allow rules, then its default. The strictest answer
 * among the blocks stands, so a block that a recipe or pack adds can tighten and never loosen.
 *
 * A rule whose pattern is for a shell command is not matched as text: the command is parsed and
 * every simple command in it must be allowed (shell-command-rules.ts, loaded only when a block has
 * such a rule). A rule whose argument cannot be read fails closed: a deny or ask rule applies, an
 * allow rule does not.
 */
import type { AnyToolDefinition, PermissionArgumentKind } from '../../contract/tool.js';
import { parsePermissionRule, ruleNamesTool, type PermissionRule } from '../../config/permission-rules.js';
import type { PermissionAnswer, PermissionBlock, PermissionPolicy, PermissionSettings } from '../../config/types.js';
import { argumentMatches, type ArgumentReading } from './argument-patterns.js';

export interface PermissionCall {
  tool: Pick<AnyToolDefinition, 'name' | 'parameters' | 'permissionArguments' | 'finishesRun'>;
  input: Record<string, unknown>;
  /** The run's workspace: path patterns are relative to it. */
  workspace: string;
}

export interface PermissionVerdict {
  answer: PermissionAnswer;
  /** The block that gave the answer, when one rule or default decided. */
  source?: string;
  /** The rule that decided, as written, or `default: ask`. */
  rule?: string;
  /** In plain words, for the model and the user. */
  reason: string;
  /** A block says every ask becomes a denial (`on_ask: deny`). */
  askBecomesDenial: boolean;
}

const strictness: Record<PermissionAnswer, number> = { allow: 0, ask: 1, deny: 2 };
const lists = ['deny', 'ask', 'allow'] as const;

export async function decidePermission(policy: PermissionPolicy, call: PermissionCall): Promise<PermissionVerdict> {
  let verdict: PermissionVerdict = { answer: 'allow', reason: 'no rule names this call', askBecomesDenial: false };
  for (const block of policy.blocks) {
    const answer = await decideBlock(block, call);
    if (strictness[answer.answer] > strictness[verdict.answer] || (verdict.source === undefined && answer.rule !== undefined && answer.answer === verdict.answer)) {
      verdict = { ...answer, askBecomesDenial: verdict.askBecomesDenial };
    }
    if (block.settings.onAsk === 'deny') verdict.askBecomesDenial = true;
  }
  return verdict;
}

type BlockAnswer = Omit<PermissionVerdict, 'askBecomesDenial'>;

async function decideBlock(block: PermissionBlock, call: PermissionCall): Promise<BlockAnswer> {
  const rules = rulesOf(block.settings);
  const named = (list: (typeof lists)[number]) => rules[list].filter((rule) => ruleNamesTool(rule, call.tool.name));
  const found = { deny: named('deny'), ask: named('ask'), allow: named('allow') };
  const commandArgument = firstOfKind(call.tool, 'command');
  if (commandArgument && lists.some((list) => found[list].some((rule) => targetOf(rule, call.tool)?.argument === commandArgument))) {
    return decideCommand(block, call, commandArgument, found);
  }
  for (const list of lists) {
    const rule = found[list].find((candidate) => ruleMatches(candidate, call, list));
    if (rule) return { answer: list, source: block.source, rule: rule.text, reason: `${block.source} ${list === 'allow' ? 'allows' : list === 'ask' ? 'asks about' : 'denies'} ${rule.text}` };
  }
  // `default: deny` must not leave the agent unable to finish: only a rule naming terminate holds it back.
  if (call.tool.finishesRun) return { answer: 'allow', reason: 'a tool that finishes the run' };
  return defaultAnswer(block);
}

function defaultAnswer(block: PermissionBlock): BlockAnswer {
  const answer = block.settings.default;
  return answer === 'allow'
    ? { answer, reason: 'no rule names this call' }
    : { answer, source: block.source, rule: `default: ${answer}`, reason: `no rule of ${block.source} names this call, and its default is ${answer}` };
}

/** A command: parsed, and decided by every simple command in it (and the files it redirects to). */
async function decideCommand(block: PermissionBlock, call: PermissionCall, argument: string, found: Record<(typeof lists)[number], PermissionRule[]>): Promise<BlockAnswer> {
  const command = call.input[argument];
  const patterns = { allow: [] as string[], ask: [] as string[], deny: [] as string[] };
  const paths = { workspace: call.workspace, allow: [] as string[], ask: [] as string[], deny: [] as string[] };
  const byPattern = new Map<string, PermissionRule>();
  for (const list of lists) {
    for (const rule of found[list]) {
      const target = targetOf(rule, call.tool);
      if (rule.pattern === undefined) {
        patterns[list].push('*');
        byPattern.set(`${list}:*`, rule);
      } else if (target?.reading === 'command' && target.argument === argument) {
        patterns[list].push(target.pattern);
        byPattern.set(`${list}:${target.pattern}`, rule);
      } else if (target?.reading === 'redirection') {
        paths[list].push(target.pattern);
        byPattern.set(`${list}:${target.pattern}`, rule);
      } else if (list !== 'allow' && target === undefined) {
        // A deny or ask rule that cannot be read applies: it must not be the way around itself.
        return { answer: list, source: block.source, rule: rule.text, reason: `${block.source} ${list === 'ask' ? 'asks about' : 'denies'} ${rule.text}` };
      }
    }
  }
  if (typeof command !== 'string') return { answer: 'ask', source: block.source, reason: `the call has no command text to check against ${block.source}'s rules` };
  const { decideShellCommand } = await import('./shell-command-rules.js');
  const decision = await decideShellCommand(command, patterns, paths);
  if (decision.decision === 'unmatched') return defaultAnswer(block);
  const rule = decision.list && decision.pattern !== undefined ? byPattern.get(`${decision.list}:${decision.pattern}`) : undefined;
  return { answer: decision.decision, source: block.source, rule: rule?.text, reason: `${block.source}: ${decision.reason}` };
}

function ruleMatches(rule: PermissionRule, call: PermissionCall, list: (typeof lists)[number]): boolean {
  if (rule.pattern === undefined) return true;
  const target = targetOf(rule, call.tool);
  // Fails closed: a deny or ask rule whose argument cannot be read still applies.
  if (!target) return list !== 'allow';
  if (!(target.argument in call.input)) return false;
  // A command's own rules are decided by parsing it (decideCommand): never as text.
  if (target.reading === 'command' || target.reading === 'redirection') return list !== 'allow';
  return argumentMatches(target.reading, target.pattern, call.input[target.argument], call.workspace);
}

export interface RuleTarget {
  argument: string;
  /** `redirection`: a path pattern for the files a command argument writes or reads. */
  reading: ArgumentReading | 'command' | 'redirection';
  pattern: string;
}

/**
 * The argument a rule's pattern is for, and how it is read: a named argument the tool has, the host
 * of its URL argument for `domain=`, or else the tool's first declared argument. Undefined when the
 * tool has no such argument.
 */
export function targetOf(rule: PermissionRule, tool: PermissionCall['tool']): RuleTarget | undefined {
  if (rule.pattern === undefined) return undefined;
  const declared = tool.permissionArguments ?? {};
  const properties = schemaProperties(tool);
  if (rule.named) {
    const { argument, pattern } = rule.named;
    if (argument in declared || argument in properties) return { argument, reading: declared[argument] ?? 'text', pattern };
    const urlArgument = argument === 'domain' ? firstOfKind(tool, 'url') : undefined;
    if (urlArgument) return { argument: urlArgument, reading: 'url-domain', pattern };
    // `bash(path=notes/**)`: the files a command redirects to.
    const commandArgument = argument === 'path' ? firstOfKind(tool, 'command') : undefined;
    if (commandArgument) return { argument: commandArgument, reading: 'redirection', pattern };
  }
  const main = Object.keys(declared)[0];
  if (main === undefined) return undefined;
  // `name=` that names no argument is part of a command (`bash(FOO=1 make)`), elsewhere a mistake.
  if (rule.named && declared[main] !== 'command') return undefined;
  return { argument: main, reading: declared[main], pattern: rule.pattern };
}

function firstOfKind(tool: PermissionCall['tool'], kind: PermissionArgumentKind): string | undefined {
  return Object.entries(tool.permissionArguments ?? {}).find(([, declared]) => declared === kind)?.[0];
}

export function schemaProperties(tool: Pick<AnyToolDefinition, 'parameters'>): Record<string, unknown> {
  const properties = (tool.parameters as { properties?: Record<string, unknown> }).properties;
  return properties && typeof properties === 'object' ? properties : {};
}

type ParsedRules = Record<(typeof lists)[number], PermissionRule[]>;
const parsedBlocks = new WeakMap<PermissionSettings, ParsedRules>();

/** A block's rules, read once: a check of every call must not parse them again. Unreadable rules are left out (validation reports them). */
function rulesOf(settings: PermissionSettings): ParsedRules {
  let parsed = parsedBlocks.get(settings);
  if (!parsed) {
    const read = (texts: readonly string[]) => texts.map(parsePermissionRule).filter((rule): rule is PermissionRule => !('problem' in rule));
    parsed = { deny: read(settings.deny), ask: read(settings.ask), allow: read(settings.allow) };
    parsedBlocks.set(settings, parsed);
  }
  return parsed;
}
