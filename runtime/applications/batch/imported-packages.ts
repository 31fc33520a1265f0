/**
 * The npm packages a plugin's source imports, read and never run: static `import ... from`,
 * `export ... from`, `import 'x'`, `import('x')` with a literal, `require('x')` and
 * `require.resolve('x')`. A small tokenizer skips comments, strings, template text and regular
 * expressions first, so an import written inside any of them is not taken for one. It reads
 * TypeScript as well as JavaScript: only tokens matter, and type annotations are plain tokens.
 * No lexer among the runtime's dependencies reads both TypeScript and `require`.
 */
import { isBuiltin } from 'node:module';

type TokenKind = 'name' | 'string' | 'punctuator' | 'other';

interface Token {
  kind: TokenKind;
  value: string;
}

/** Words after which a `/` starts a regular expression rather than a division. */
const expressionKeywords = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'instanceof', 'new', 'void', 'delete', 'throw', 'yield', 'await', 'of']);

/** The package names `source` imports: no built-ins, no relative or absolute paths, no `manus-runtime`. */
export function importedPackages(source: string): string[] {
  const names = new Set<string>();
  for (const specifier of importedSpecifiers(source)) {
    const name = packageNameOf(specifier);
    if (name !== undefined) names.add(name);
  }
  return [...names];
}

/** Every module specifier `source` imports with a literal, as written. */
export function importedSpecifiers(source: string): string[] {
  const tokens = tokenize(source);
  const specifiers: string[] = [];
  let statementStart = -1;
  const at = (index: number): Token | undefined => tokens[index];
  const isWord = (index: number, word: string) => at(index)?.kind === 'name' && at(index)?.value === word;
  const isPunctuator = (index: number, value: string) => at(index)?.kind === 'punctuator' && at(index)?.value === value;
  const literalCall = (open: number) => isPunctuator(open, '(') && at(open + 1)?.kind === 'string' && (isPunctuator(open + 2, ')') || isPunctuator(open + 2, ','));
  for (let index = 0; index < tokens.length; index += 1) {
    const token = tokens[index];
    if (token.kind !== 'name' || isPunctuator(index - 1, '.')) continue;
    if (token.value === 'import' || token.value === 'export') {
      statementStart = index;
      if (token.value === 'import' && at(index + 1)?.kind === 'string') specifiers.push(at(index + 1)!.value);
      else if (token.value === 'import' && literalCall(index + 1)) specifiers.push(at(index + 2)!.value);
    } else if (token.value === 'from' && at(index + 1)?.kind === 'string') {
      if (!isTypeOnly(statementStart)) specifiers.push(at(index + 1)!.value);
    } else if (token.value === 'require') {
      if (literalCall(index + 1)) specifiers.push(at(index + 2)!.value);
      else if (isPunctuator(index + 1, '.') && isWord(index + 2, 'resolve') && literalCall(index + 3)) specifiers.push(at(index + 4)!.value);
    }
  }
  return specifiers;

  /** `import type { A } from`, `export type * from`: erased when compiled, so they load nothing. */
  function isTypeOnly(start: number): boolean {
    if (start < 0 || !isWord(start + 1, 'type')) return false;
    const next = at(start + 2);
    return next !== undefined && !(next.kind === 'name' && next.value === 'from') && !(next.kind === 'punctuator' && (next.value === ',' || next.value === '='));
  }
}

/** The package a bare specifier names (`@scope/name` or its first segment), or undefined for anything else. */
export function packageNameOf(specifier: string): string | undefined {
  if (specifier === '' || specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('#')) return undefined;
  // node:, data:, https: and other URLs, and Windows paths.
  if (specifier.includes(':') || specifier.includes('\\')) return undefined;
  if (isBuiltin(specifier)) return undefined;
  const segments = specifier.split('/');
  const name = specifier.startsWith('@') ? segments.slice(0, 2).join('/') : segments[0];
  if (specifier.startsWith('@') && (segments.length < 2 || segments[1] === '')) return undefined;
  if (name === 'manus-runtime' || !/^(@[a-z0-9][\w.~-]*\/)?[\w~-][\w.~-]*$/i.test(name)) return undefined;
  return name;
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let position = source.startsWith('#!') ? source.indexOf('\n') : 0;
  if (position < 0) return tokens;
  // Brace depths at which a template's `${` was opened: its `}` resumes the template's text.
  const templateDepths: number[] = [];
  let depth = 0;
  while (position < source.length) {
    const character = source[position];
    const next = source[position + 1];
    if (/\s/.test(character)) {
      position += 1;
    } else if (character === '/' && next === '/') {
      const end = source.indexOf('\n', position);
      position = end < 0 ? source.length : end;
    } else if (character === '/' && next === '*') {
      const end = source.indexOf('*/', position + 2);
      position = end < 0 ? source.length : end + 2;
    } else if (character === '"' || character === "'") {
      const end = stringEnd(source, position, character);
      tokens.push({ kind: 'string', value: unescape(source.slice(position + 1, end - 1)) });
      position = end;
    } else if (character === '`' || (character === '}' && templateDepths.at(-1) === depth)) {
      if (character === '}') templateDepths.pop();
      const { end, opensSubstitution, text } = templateEnd(source, position + 1);
      // A template without substitutions is as literal as a string.
      tokens.push(character === '`' && !opensSubstitution ? { kind: 'string', value: text } : { kind: 'other', value: '`' });
      if (opensSubstitution) templateDepths.push(depth);
      position = end;
    } else if (character === '/' && startsRegularExpression(tokens.at(-1))) {
      position = regularExpressionEnd(source, position);
      tokens.push({ kind: 'other', value: '/re/' });
    } else if (/[\w$]/.test(character)) {
      let end = position + 1;
      while (end < source.length && /[\w$]/.test(source[end])) end += 1;
      tokens.push({ kind: 'name', value: source.slice(position, end) });
      position = end;
    } else {
      if (character === '{') depth += 1;
      else if (character === '}') depth -= 1;
      tokens.push({ kind: 'punctuator', value: character });
      position += 1;
    }
  }
  return tokens;
}

function stringEnd(source: string, start: number, quote: string): number {
  let position = start + 1;
  while (position < source.length && source[position] !== quote && source[position] !== '\n') {
    position += source[position] === '\\' ? 2 : 1;
  }
  return Math.min(position + 1, source.length);
}

/** From just inside a template's text to just past its closing backtick or its next `${`. */
function templateEnd(source: string, start: number): { end: number; opensSubstitution: boolean; text: string } {
  let position = start;
  while (position < source.length) {
    if (source[position] === '\\') position += 2;
    else if (source[position] === '`') return { end: position + 1, opensSubstitution: false, text: unescape(source.slice(start, position)) };
    else if (source[position] === '$' && source[position + 1] === '{') return { end: position + 2, opensSubstitution: true, text: '' };
    else position += 1;
  }
  return { end: source.length, opensSubstitution: false, text: '' };
}

function startsRegularExpression(previous: Token | undefined): boolean {
  if (previous === undefined) return true;
  if (previous.kind === 'punctuator') return ![')', ']'].includes(previous.value);
  if (previous.kind === 'name') return expressionKeywords.has(previous.value);
  return false;
}

function regularExpressionEnd(source: string, start: number): number {
  let position = start + 1;
  let inClass = false;
  while (position < source.length && source[position] !== '\n') {
    const character = source[position];
    if (character === '\\') position += 1;
    else if (character === '[') inClass = true;
    else if (character === ']') inClass = false;
    else if (character === '/' && !inClass) break;
    position += 1;
  }
  position += 1;
  while (position < source.length && /[a-z]/i.test(source[position])) position += 1;
  return position;
}

/** A specifier's escapes, enough for the names npm allows. */
function unescape(text: string): string {
  return text.replace(/\\(u\{[0-9a-f]+\}|u[0-9a-f]{4}|x[0-9a-f]{2}|.)/gi, (_, escape: string) => {
    if (/^u\{/i.test(escape)) return String.fromCodePoint(parseInt(escape.slice(2, -1), 16));
    if (/^[ux]/i.test(escape) && escape.length > 1) return String.fromCharCode(parseInt(escape.slice(1), 16));
    return escape;
  });
}
