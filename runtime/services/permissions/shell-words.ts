/**
 * The value of one shell word after quote removal, as bash would see it before running the
 * command, or the admission that it is not known before the command runs.
 *
 * - `literal`: the word's value is fixed by the text (`'r''m'`, `r\m`, `"rm"` and `$'r\x6d'` are `rm`);
 * - `single`: exactly one word whose value is not known (`"$x"`, `"$(date)"`);
 * - `spread`: any number of words, none included, whose values are not known: an unquoted expansion
 *   is split on IFS, a glob or a brace expansion becomes the names it matches.
 */
import type { SyntaxNode } from './syntax-tree.js';

export type ShellWord =
  | { kind: 'literal'; value: string; text: string }
  | { kind: 'single' | 'spread'; text: string };

/** The word that stands for what a command such as `xargs` appends: unknown, any number. */
export function appendedWords(text: string): ShellWord {
  return { kind: 'spread', text };
}

export function literalWord(value: string): ShellWord {
  return { kind: 'literal', value, text: value };
}

/** The word a syntax node denotes; nodes of no word kind are taken as unknown words. */
export function shellWord(node: SyntaxNode): ShellWord {
  const parts = wordParts(node);
  const text = node.text;
  if (parts.some((part) => part.kind === 'spread')) return { kind: 'spread', text };
  // Brace expansion runs on the unquoted parts together: `{r,m}`, `{a..z}`, `x{,y}`.
  const unquoted = parts.filter((part) => part.kind === 'unquoted').map((part) => part.raw).join('');
  if (/\{/.test(unquoted) && /,|\.\./.test(unquoted)) return { kind: 'spread', text };
  if (parts.some((part) => part.kind === 'single')) return { kind: 'single', text };
  return { kind: 'literal', value: parts.map((part) => (part.kind === 'unquoted' || part.kind === 'quoted' ? part.value : '')).join(''), text };
}

type WordPart =
  | { kind: 'unquoted'; raw: string; value: string }
  | { kind: 'quoted'; value: string }
  | { kind: 'single' | 'spread' };

function wordParts(node: SyntaxNode): WordPart[] {
  switch (node.type) {
    case 'word':
      return [unquotedPart(node.text)];
    case 'command_name':
    case 'translated_string':
      return node.namedChildren.flatMap((child) => wordParts(child));
    case 'number':
      return [{ kind: 'unquoted', raw: node.text, value: node.text }];
    case 'raw_string':
      return [{ kind: 'quoted', value: node.text.slice(1, -1) }];
    case 'ansi_c_string': {
      const value = decodeAnsiC(node.text.slice(2, -1));
      return [value === undefined ? { kind: 'single' } : { kind: 'quoted', value }];
    }
    case 'string':
      return [doubleQuoted(node)];
    case 'concatenation':
      return node.children.flatMap((child) => wordParts(child));
    case 'process_substitution':
      // Becomes one path, /dev/fd/N.
      return [{ kind: 'single' }];
    default:
      // Expansions, substitutions and anything else unquoted: split on IFS, globbed.
      return [{ kind: 'spread' }];
  }
}

/** An unquoted word: backslashes quote the next character; `*`, `?` and `[` glob. */
function unquotedPart(raw: string): WordPart {
  let value = '';
  for (let index = 0; index < raw.length; index += 1) {
    const character = raw[index]!;
    if (character === '\\') {
      const next = raw[index + 1];
      index += 1;
      if (next === undefined || next === '\n') continue;
      value += next;
    } else if (character === '*' || character === '?' || character === '[') {
      return { kind: 'spread' };
    } else {
      value += character;
    }
  }
  return { kind: 'unquoted', raw, value };
}

/** Inside double quotes a backslash quotes only `$`, a backquote, `"`, `\` and a newline. */
function doubleQuoted(node: SyntaxNode): WordPart {
  let value = '';
  for (const child of node.namedChildren) {
    if (child.type !== 'string_content') return { kind: 'single' };
    value += child.text.replace(/\\([$`"\\\n])/g, (_, character: string) => (character === '\n' ? '' : character));
  }
  return { kind: 'quoted', value };
}

const simpleEscapes: Record<string, string> = { a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };

/** The value of `$'…'`, or undefined for an escape this does not know (the word is then unknown). */
export function decodeAnsiC(body: string): string | undefined {
  let value = '';
  for (let index = 0; index < body.length; index += 1) {
    const character = body[index]!;
    if (character !== '\\') {
      value += character;
      continue;
    }
    const next = body[index + 1];
    if (next === undefined) return undefined;
    if (next in simpleEscapes) {
      value += simpleEscapes[next];
      index += 1;
      continue;
    }
    const forms: Array<[RegExp, number]> = [[/^[0-7]{1,3}/, 8], [/^x[0-9a-fA-F]{1,2}/, 16], [/^u[0-9a-fA-F]{1,4}/, 16], [/^U[0-9a-fA-F]{1,8}/, 16]];
    const rest = body.slice(index + 1);
    const form = forms.find(([pattern]) => pattern.test(rest));
    if (!form) {
      if (next === 'c' && body[index + 2] !== undefined) {
        value += String.fromCharCode(body.charCodeAt(index + 2) & 0x1f);
        index += 2;
        continue;
      }
      return undefined;
    }
    const digits = rest.match(form[0])![0];
    const code = Number.parseInt(form[1] === 8 ? digits : digits.slice(1), form[1]);
    // A NUL ends the string in bash.
    if (code === 0) return value;
    if (code > 0x10ffff) return undefined;
    value += String.fromCodePoint(code);
    index += digits.length;
  }
  return value;
}
