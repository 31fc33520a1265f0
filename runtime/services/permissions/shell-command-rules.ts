/**
 * Decides a shell command against the patterns of `bash(...)` rules: deny when any simple command
 * (after unwrapping) or file redirection matches a deny rule, ask when one matches an ask rule or
 * when a part cannot be resolved, allow only when every simple command matches an allow rule and
 * every redirection stays where it may. docs/permissions.md, "Shell command rules", is the contract.
 */
import { posix } from 'node:path';
import { analyzeShellCommand, canonicalCommandName, type ShellAnalysis, type ShellWord, type SimpleCommand } from './shell-command-analysis.js';

export interface ShellRules { allow: readonly string[]; ask: readonly string[]; deny: readonly string[] }
export interface ShellPathRules { workspace: string; allow: readonly string[]; ask: readonly string[]; deny: readonly string[] }
export interface ShellDecision {
  /** `unmatched`: no rule of this set applies; the caller's default decides. */
  decision: 'allow' | 'ask' | 'deny' | 'unmatched';
  /** The rule that decided, when one did. */
  list?: 'allow' | 'ask' | 'deny';
  pattern?: string;
  /** Plain words naming the simple command or redirection that decided. */
  reason: string;
  /** Every simple command found, after unwrapping, as text. */
  commands: string[];
}

type Strength = 'certain' | 'possible' | 'none';
type PatternWord = { kind: 'literal'; value: string } | { kind: 'glob'; expression: RegExp } | { kind: 'any' };
interface PatternAlternative { words: PatternWord[]; /** zero or more further words */ trailing: boolean }
const wildcard = Symbol('wildcard');
type Segment = string | typeof wildcard;

/** Why `pattern` is malformed, or undefined when it is well formed. */
export function shellPatternProblem(pattern: string): string | undefined {
  const { problem, words } = tokenize(pattern);
  if (problem) return problem;
  if (words.length === 0) return 'the pattern is empty; a bare `bash` rule covers every command';
  for (const [index, word] of words.entries()) {
    if (index < words.length - 1 && endsWithColonWildcard(word)) return `":*" is a prefix marker and may end only the last word (in "${pattern}"); quote the word if the characters are meant literally`;
  }
  const last = words[words.length - 1]!;
  if (endsWithColonWildcard(last) && last.length === 2) return `":*" needs a word before it, as in "npm run test:*"`;
  return undefined;
}

export async function decideShellCommand(command: string, rules: ShellRules, paths: ShellPathRules): Promise<ShellDecision> {
  const quick = decideWithoutParsing(rules, paths);
  if (quick) return quick;
  let analysis: ShellAnalysis;
  try {
    analysis = await analyzeShellCommand(command);
  } catch (error) {
    return { decision: 'ask', reason: `the shell parser could not be loaded (${error instanceof Error ? error.message : String(error)}), so the command could not be checked`, commands: [] };
  }
  return decideAnalysis(analysis, rules, paths);
}

/** No rules, or only `*` (a bare `bash` rule) and no path rules: decided without the parser. */
function decideWithoutParsing(rules: ShellRules, paths: ShellPathRules): ShellDecision | undefined {
  if (paths.allow.length + paths.ask.length + paths.deny.length > 0) return undefined;
  const lists = [['deny', rules.deny], ['ask', rules.ask], ['allow', rules.allow]] as const;
  if (lists.some(([, patterns]) => patterns.some((pattern) => pattern.trim() !== '*'))) return undefined;
  for (const [list, patterns] of lists) {
    if (patterns.length > 0) return { decision: list, list, pattern: '*', reason: `every command matches the ${list} rule bash(*)`, commands: [] };
  }
  return { decision: 'unmatched', reason: 'no shell rule applies', commands: [] };
}

interface Finding {
  decision: 'deny' | 'ask';
  list?: 'ask' | 'deny';
  pattern?: string;
  reason: string;
  /** An ask rule that surely matches: named first, before possible matches and unresolved parts. */
  askRule?: boolean;
}

function decideAnalysis(analysis: ShellAnalysis, rules: ShellRules, paths: ShellPathRules): ShellDecision {
  const commands = analysis.commands.map((command) => command.text);
  const denies: Finding[] = [];
  const asks: Finding[] = [];
  for (const command of analysis.commands) {
    const deny = strongestMatch(command, rules.deny, 'restrict');
    if (deny.strength === 'certain') denies.push({ decision: 'deny', list: 'deny', pattern: deny.pattern, reason: `"${command.text}" matches the deny rule bash(${deny.pattern})` });
    else if (deny.strength === 'possible') asks.push({ decision: 'ask', list: 'deny', pattern: deny.pattern, reason: `"${command.text}" may match the deny rule bash(${deny.pattern}), depending on words not known before it runs` });
    const ask = strongestMatch(command, rules.ask, 'restrict');
    if (ask.strength !== 'none') asks.push({ decision: 'ask', list: 'ask', pattern: ask.pattern, askRule: ask.strength === 'certain', reason: `"${command.text}" ${ask.strength === 'certain' ? 'matches' : 'may match'} the ask rule bash(${ask.pattern})` });
  }
  for (const redirection of analysis.redirections) {
    const finding = checkRedirection(redirection.target, redirection.text, analysis, paths);
    if (finding?.decision === 'deny') denies.push(finding);
    else if (finding) asks.push(finding);
  }
  for (const part of analysis.unresolved) asks.push({ decision: 'ask', reason: `"${part.text}" cannot be checked: ${part.reason}` });
  const decisive = denies[0] ?? asks.find((finding) => finding.askRule) ?? asks[0];
  if (decisive) {
    const others = denies.length + asks.length - 1;
    const reason = others > 0 ? `${decisive.reason} (and ${others} more finding${others === 1 ? '' : 's'})` : decisive.reason;
    return { decision: decisive.decision, ...(decisive.list ? { list: decisive.list, pattern: decisive.pattern } : {}), reason, commands };
  }
  if (analysis.commands.length === 0) return { decision: 'unmatched', reason: 'the command runs no program that a rule could match', commands };
  const covered: Array<{ command: SimpleCommand; pattern: string }> = [];
  for (const command of analysis.commands) {
    const allow = strongestMatch(command, rules.allow, 'allow');
    if (allow.strength !== 'certain') return { decision: 'unmatched', reason: `no allow rule covers "${command.text}"`, commands };
    covered.push({ command, pattern: allow.pattern! });
  }
  return {
    decision: 'allow',
    list: 'allow',
    pattern: covered[0]!.pattern,
    reason: `every command is allowed: ${covered.map(({ command, pattern }) => `"${command.text}" by bash(${pattern})`).join(', ')}`,
    commands,
  };
}

/**
 * `allow` takes only a certain match. `restrict` (deny, ask) also reports a possible one: a word
 * not known before the command runs could be the word the rule names (`rm $flags` against `rm -rf *`),
 * and a command name with a path counts by its last part (`./rm`, `/opt/x/rm` are `rm`).
 */
function strongestMatch(command: SimpleCommand, patterns: readonly string[], mode: 'allow' | 'restrict'): { strength: Strength; pattern?: string } {
  let best: { strength: Strength; pattern?: string } = { strength: 'none' };
  const [first, ...rest] = command.words;
  if (!first) return best;
  const candidates: ShellWord[][] = [];
  if (first.kind === 'literal') {
    const names = new Set([canonicalCommandName(first.value)]);
    if (mode === 'restrict') names.add(posix.basename(first.value));
    for (const name of names) candidates.push([{ kind: 'literal', value: name, text: first.text }, ...rest]);
  } else {
    candidates.push([...command.words]);
  }
  for (const pattern of patterns) {
    for (const alternative of parsePattern(pattern)) {
      for (const words of candidates) {
        const strength = matchWords(words, 0, alternative, 0, mode);
        if (strength === 'certain') return { strength, pattern };
        if (strength === 'possible' && best.strength === 'none') best = { strength, pattern };
      }
    }
  }
  return best;
}

/**
 * Options that make a command run a program, module or script of the caller's choosing (npm's
 * script shell, node's preloads, git's config and hooks): `bash(npm run test:*)` allows npm's test
 * script, not `npm run test --script-shell=./evil`. Known options only, like the wrappers: an allow
 * list is still not a sandbox.
 */
const programOptions: ReadonlyMap<string, RegExp> = new Map([
  ...['npm', 'npx', 'pnpm', 'yarn'].map((name): [string, RegExp] => [name, /^(--script-shell|--node-options|--shell|--call|--userconfig|--globalconfig|--init-module|--editor|--browser|--prefix|-c)(=|$)/]),
  ['node', /^(-r|--require|--import|--loader|--experimental-loader|-e|--eval|-p|--print|--env-file|--inspect[\w-]*)(=|$)/],
  ['git', /^(-c|--config-env|--exec-path|--upload-pack|--receive-pack|--exec|--ext-diff|--textconv|-u|--template|--git-dir|--work-tree)(=|$)/],
  ['make', /^(SHELL=|MAKEFLAGS=|--eval(=|$)|-E$|-f$|--file(=|$)|--makefile(=|$)|-C$|--directory(=|$))/],
  ['pytest', /^(-p|--rootdir|-c|--confcutdir)(=|$)/],
  ['tar', /^(--to-command|--checkpoint-action|--use-compress-program|-I|--rsh-command|--info-script|--new-volume-script|-F)(=|$)/],
  ['rsync', /^(-e|--rsh|--rsync-path)(=|$)/],
  ['ssh', /^(-o|-F)$|^-o/],
]);

function runsAnotherProgram(command: ShellWord | undefined, arguments_: readonly ShellWord[]): boolean {
  if (command?.kind !== 'literal') return false;
  const options = programOptions.get(command.value);
  if (!options) return false;
  return arguments_.some((word) => word.kind === 'literal' && options.test(word.value));
}

function matchWords(words: readonly ShellWord[], index: number, pattern: PatternAlternative, position: number, mode: 'allow' | 'restrict'): Strength {
  if (position === pattern.words.length) {
    if (index === words.length) return 'certain';
    // A trailing `*` covers further arguments, never one that hands the command a program to run.
    if (pattern.trailing) return mode === 'allow' && runsAnotherProgram(words[0], words.slice(index)) ? 'none' : 'certain';
    return mode === 'restrict' && words.slice(index).every((word) => word.kind === 'spread') ? 'possible' : 'none';
  }
  const word = words[index];
  const patternWord = pattern.words[position]!;
  if (!word) return 'none';
  switch (word.kind) {
    case 'literal':
      return matchesPatternWord(word.value, patternWord) ? matchWords(words, index + 1, pattern, position + 1, mode) : 'none';
    case 'single': {
      if (patternWord.kind === 'any') return matchWords(words, index + 1, pattern, position + 1, mode);
      return mode === 'restrict' && matchWords(words, index + 1, pattern, position + 1, mode) !== 'none' ? 'possible' : 'none';
    }
    case 'spread': {
      if (mode === 'allow') return 'none';
      for (let taken = 0; position + taken <= pattern.words.length; taken += 1) {
        if (matchWords(words, index + 1, pattern, position + taken, mode) !== 'none') return 'possible';
      }
      return 'none';
    }
  }
}

function matchesPatternWord(value: string, word: PatternWord): boolean {
  switch (word.kind) {
    case 'any':
      return true;
    case 'literal':
      return value === word.value;
    case 'glob':
      return word.expression.test(value);
  }
}

const parsedPatterns = new Map<string, PatternAlternative[]>();

/** A pattern as word lists; `a b:*` gives two, `a b` and `a b:…`, both followed by any words. */
function parsePattern(pattern: string): PatternAlternative[] {
  const known = parsedPatterns.get(pattern);
  if (known) return known;
  const segmentsList = tokenize(pattern).words;
  let trailing = false;
  const last = segmentsList[segmentsList.length - 1];
  const alternatives: PatternAlternative[] = [];
  if (last && last.length === 1 && last[0] === wildcard) {
    trailing = true;
    segmentsList.pop();
  }
  if (last && !trailing && endsWithColonWildcard(last) && last.length > 2) {
    const base = last.slice(0, -2);
    const head = segmentsList.slice(0, -1);
    alternatives.push({ words: [...head, base].map(patternWord), trailing: true });
    const prefixed: Segment[] = [...base, ':', wildcard];
    alternatives.push({ words: [...head, prefixed].map(patternWord), trailing: true });
  } else {
    alternatives.push({ words: segmentsList.map(patternWord), trailing });
  }
  for (const alternative of alternatives) {
    const first = alternative.words[0];
    if (first?.kind === 'literal') alternative.words[0] = { kind: 'literal', value: canonicalCommandName(first.value) };
  }
  parsedPatterns.set(pattern, alternatives);
  return alternatives;
}

function endsWithColonWildcard(segments: readonly Segment[]): boolean {
  return segments.length >= 2 && segments[segments.length - 1] === wildcard && segments[segments.length - 2] === ':';
}

function patternWord(segments: readonly Segment[]): PatternWord {
  if (segments.length === 1 && segments[0] === wildcard) return { kind: 'any' };
  if (!segments.includes(wildcard)) return { kind: 'literal', value: segments.join('') };
  const source = segments.map((segment) => (segment === wildcard ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
  return { kind: 'glob', expression: new RegExp(`^${source}$`, 's') };
}

/**
 * Splits a pattern into words of literal characters and wildcards. Quotes group characters into
 * one word and make `*` literal; a backslash makes the next character literal.
 */
function tokenize(pattern: string): { words: Segment[][]; problem?: string } {
  const words: Segment[][] = [];
  let current: Segment[] | undefined;
  let problem: string | undefined;
  const push = (segment: Segment) => {
    current ??= [];
    // One character per segment keeps `:` and `*` apart for the prefix marker.
    current.push(segment);
  };
  for (let index = 0; index < pattern.length; index += 1) {
    const character = pattern[index]!;
    if (/\s/.test(character)) {
      if (character === '\n' || character === '\r') problem ??= 'a pattern is one line; it matches one simple command';
      if (current) words.push(current);
      current = undefined;
    } else if (character === '\\') {
      const next = pattern[index + 1];
      if (next === undefined) problem ??= 'the pattern ends with a backslash that escapes nothing';
      else push(next);
      index += 1;
    } else if (character === "'" || character === '"') {
      const end = pattern.indexOf(character, index + 1);
      if (end === -1) {
        problem ??= `the quote ${character} at column ${index + 1} is not closed`;
        for (const each of pattern.slice(index + 1)) push(each);
        index = pattern.length;
      } else {
        current ??= [];
        for (const each of pattern.slice(index + 1, end)) push(each);
        index = end;
      }
    } else if (character === '*') {
      push(wildcard);
    } else {
      if (';&|<>()`$'.includes(character)) {
        problem ??= `"${character}" is shell syntax: a pattern matches one simple command, so give each command its own rule (bash(git status) and bash(git diff *), not bash(git status && git diff *)); quote the character if it is meant literally`;
      }
      push(character);
    }
  }
  if (current) words.push(current);
  return problem ? { words, problem } : { words };
}

const harmlessTargets = new Set(['/dev/null', '/dev/stdout', '/dev/stderr']);

/** A redirection's target against the path rules: inside the workspace it may go, outside it needs an allow rule. */
function checkRedirection(target: ShellWord, text: string, analysis: ShellAnalysis, paths: ShellPathRules): Finding | undefined {
  if (target.kind !== 'literal') return { decision: 'ask', reason: `the redirection "${text}" goes to a file not known before it runs` };
  const value = target.value;
  if (harmlessTargets.has(value)) return undefined;
  const workspace = posix.resolve(paths.workspace);
  let location: string;
  if (value.startsWith('~')) location = posix.normalize(value);
  else if (posix.isAbsolute(value)) location = posix.normalize(value);
  else if (analysis.changesDirectory) return { decision: 'ask', reason: `the redirection "${text}" names a relative path after the command changes folder` };
  else location = posix.resolve(workspace, value);
  const matching = (list: readonly string[]) => list.find((pattern) => pathMatches(location, pattern, workspace));
  const deny = matching(paths.deny);
  if (deny !== undefined) return { decision: 'deny', list: 'deny', pattern: `path=${deny}`, reason: `the redirection "${text}" matches the deny rule bash(path=${deny})` };
  const ask = matching(paths.ask);
  if (ask !== undefined) return { decision: 'ask', list: 'ask', pattern: `path=${ask}`, reason: `the redirection "${text}" matches the ask rule bash(path=${ask})` };
  const inside = location === workspace || location.startsWith(`${workspace}/`);
  if (inside || matching(paths.allow) !== undefined) return undefined;
  return { decision: 'ask', reason: `the redirection "${text}" ${target.value.startsWith('/dev/tcp/') || target.value.startsWith('/dev/udp/') ? 'opens a network connection' : 'reaches outside the workspace'}, and no bash(path=...) allow rule covers it` };
}

/** A path glob: `**` crosses folders, `*` and `?` do not; relative globs are from the workspace. */
function pathMatches(location: string, pattern: string, workspace: string): boolean {
  const anchored = pattern.startsWith('~') || posix.isAbsolute(pattern) ? pattern : posix.join(workspace, pattern);
  if (pattern.startsWith('~') !== location.startsWith('~')) return false;
  let source = '';
  for (let index = 0; index < anchored.length; index += 1) {
    const character = anchored[index]!;
    if (anchored.startsWith('/**', index) && index + 3 === anchored.length) {
      source += '(/.*)?';
      index += 2;
    } else if (anchored.startsWith('**', index)) {
      source += '.*';
      index += 1;
    } else if (character === '*') {
      source += '[^/]*';
    } else if (character === '?') {
      source += '[^/]';
    } else {
      source += character.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`, 's').test(location);
}
