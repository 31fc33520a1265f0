/**
 * What a shell command would run, read with a real bash parser (tree-sitter-bash through
 * web-tree-sitter), not with regular expressions: every simple command, after unwrapping
 * wrappers (`sudo`, `timeout`, `xargs`, `find -exec`…), shell strings (`bash -c '…'`, `eval '…'`,
 * a here-doc fed to `sh`) and substitutions; every file redirection; and every part whose meaning
 * is not known before it runs (a command name in a variable, `curl … | sh`, a parse error).
 *
 * The parser is loaded once per process, on the first call: a run whose rules need no parsing
 * never loads it.
 */
import { createRequire } from 'node:module';
import type { Node as ParsedNode, Parser } from 'web-tree-sitter';
import { unwrapCommand, wrappers } from './shell-command-wrappers.js';
import { appendedWords, literalWord, shellWord, type ShellWord } from './shell-words.js';
import { copySyntaxTree, type SyntaxNode } from './syntax-tree.js';

export type { ShellWord } from './shell-words.js';

export interface SimpleCommand {
  /** The words as bash would pass them, the command name first (as written: `/bin/rm` stays so). */
  readonly words: readonly ShellWord[];
  readonly text: string;
}

export interface FileRedirection {
  readonly operator: string;
  readonly target: ShellWord;
  readonly access: 'read' | 'write';
  readonly text: string;
}

export interface UnresolvedPart {
  readonly text: string;
  readonly reason: string;
}

export interface ShellAnalysis {
  readonly commands: SimpleCommand[];
  readonly redirections: FileRedirection[];
  readonly unresolved: UnresolvedPart[];
  /** A `cd`, `pushd` or `popd` runs: relative paths after it are not relative to the workspace. */
  changesDirectory: boolean;
}

let parserLoading: Promise<Parser> | undefined;

/** The bash parser, loaded on first use; the .wasm files are found through module resolution. */
export function loadShellParser(): Promise<Parser> {
  parserLoading ??= (async () => {
    const { Parser: ParserClass, Language } = await import('web-tree-sitter');
    const resolve = createRequire(import.meta.url).resolve;
    const runtimeFile = resolve('web-tree-sitter/web-tree-sitter.wasm');
    await ParserClass.init({ locateFile: () => runtimeFile });
    const language = await Language.load(resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
    return new ParserClass().setLanguage(language);
  })();
  // A failed load is tried again by the next call rather than remembered.
  parserLoading.catch(() => { parserLoading = undefined; });
  return parserLoading;
}

/** Whether this process has started loading the parser (a run that needs none never does). */
export function shellParserLoaded(): boolean {
  return parserLoading !== undefined;
}

/** Reads what `command` would run. */
export async function analyzeShellCommand(command: string): Promise<ShellAnalysis> {
  const parser = await loadShellParser();
  const analysis: ShellAnalysis = { commands: [], redirections: [], unresolved: [], changesDirectory: false };
  new ScriptReader(parser, analysis).read(command, 0);
  return analysis;
}

/** `bash -c "bash -c '…'"` nests; past this depth the rest is not followed. */
const maximumDepth = 8;

const reservedWords = new Set(['{', '}', '!', '[[', ']]', '(', ')', 'if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'case', 'esac', 'while', 'until', 'for', 'select', 'function', 'in']);
const shells = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'yash', 'posh', 'rbash', 'fish']);
const systemFolders = new Set(['/bin', '/usr/bin', '/usr/local/bin', '/sbin', '/usr/sbin', '/usr/local/sbin']);

/** `/usr/bin/rm` is `rm`; `./rm` or `/tmp/rm` are other programs and keep their path. */
export function canonicalCommandName(name: string): string {
  const slash = name.lastIndexOf('/');
  if (slash === -1) return name;
  const folder = name.slice(0, slash).replace(/\/+$/, '').replace(/\/{2,}/g, '/');
  return systemFolders.has(folder) ? name.slice(slash + 1) : name;
}

/** Variables whose value is a command that a program runs (`GIT_PAGER=… git log`): parsed as one. */
const commandVariables = new Set(['PAGER', 'GIT_PAGER', 'MANPAGER', 'SYSTEMD_PAGER', 'EDITOR', 'VISUAL', 'GIT_EDITOR', 'GIT_SEQUENCE_EDITOR', 'GIT_SSH_COMMAND', 'GIT_EXTERNAL_DIFF']);

/** Variables that change which program runs, what it loads or how the shell reads words. */
const sensitiveVariable = /^(PATH|IFS|ENV|BASH_ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|CDPATH|GLOBIGNORE|EXECIGNORE|BASH_LOADABLES_PATH|HOME|LD_\w+|DYLD_\w+|BASH_FUNC_\S*|GIT_(CONFIG\w*|EXEC_PATH|TEMPLATE_DIR|SSH|PROXY_COMMAND|ASKPASS|DIR)|SSH_ASKPASS|SUDO_ASKPASS|LESSOPEN|LESSCLOSE|BROWSER|NODE_OPTIONS|NODE_PATH|PYTHONPATH|PYTHONSTARTUP|PYTHONHOME|PERL5LIB|PERL5OPT|PERLLIB|RUBYOPT|RUBYLIB|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|npm_config_\w+|NPM_CONFIG_\w+)$/;

/** Where a command's standard input comes from, when that decides what a shell runs. */
type StandardInput =
  | { kind: 'inherited' }
  | { kind: 'pipe' }
  | { kind: 'text'; text: string | undefined; redirection: string }
  | { kind: 'file'; redirection: string };

interface Context {
  readonly depth: number;
  /**
   * Functions this script surely defines, each with where its definition ends: a call after it
   * runs the body, which is checked where it is defined, rather than a program of that name.
   */
  readonly functions: ReadonlyMap<string, number>;
  /** Whether the tree has syntax errors or missing parts to look for. */
  readonly hasError: boolean;
  readonly source: string;
}

class ScriptReader {
  constructor(private readonly parser: Parser, private readonly analysis: ShellAnalysis) {}

  read(source: string, depth: number): void {
    if (depth > maximumDepth) {
      this.unresolved(source, `shell strings nest more than ${maximumDepth} deep`);
      return;
    }
    const tree = this.parser.parse(source);
    if (!tree) {
      this.unresolved(source, 'the shell parser returned nothing');
      return;
    }
    try {
      const root = tree.rootNode;
      this.checkLineContinuations(source, root);
      const hasError = root.hasError;
      const copy = copySyntaxTree(tree, source, hasError);
      this.visit(copy, { depth, functions: definedFunctions(source, copy), hasError, source }, { kind: 'inherited' });
    } finally {
      tree.delete();
    }
  }

  private unresolved(text: string, reason: string): void {
    this.analysis.unresolved.push({ text: text.length > 200 ? `${text.slice(0, 200)}…` : text, reason });
  }

  /**
   * Bash removes a backslash-newline before it splits words (`r\⏎m` is `rm`); the grammar reads
   * it as a space. Where it joins two words, the command is not resolved.
   */
  private checkLineContinuations(source: string, root: ParsedNode): void {
    for (const match of source.matchAll(/(\\+)\n/g)) {
      if (match[1]!.length % 2 === 0) continue;
      const at = match.index + match[1]!.length - 1;
      const before = source[at - 1];
      const after = source[at + 2];
      if (before === undefined || after === undefined || /\s/.test(before) || /\s/.test(after)) continue;
      let node: ParsedNode | null = root.descendantForIndex(at);
      let quoted = false;
      for (; node; node = node.parent) if (['raw_string', 'string', 'ansi_c_string', 'heredoc_body', 'comment'].includes(node.type)) quoted = true;
      if (!quoted) this.unresolved(source.slice(Math.max(0, at - 20), at + 22), 'a backslash at the end of a line joins two words, which the parser reads apart');
    }
  }

  private visit(node: SyntaxNode, context: Context, input: StandardInput): void {
    if (context.hasError && node.isMissing) {
      this.unresolved(node.parent?.text ?? node.text, 'the command is incomplete');
      return;
    }
    switch (node.type) {
      case 'comment':
      case 'word':
      case 'number':
      case 'raw_string':
      case 'ansi_c_string':
      case 'string_content':
      case 'variable_name':
        // Leaves: nothing runs inside them.
        return;
      case 'ERROR':
        this.unresolved(node.text, 'this part cannot be parsed as bash');
        // Commands the parser still recognised inside are read, so that a deny rule still applies.
        this.visitChildren(node, context);
        return;
      case 'command':
        this.command(node, [], context, input);
        return;
      case 'redirected_statement': {
        this.checkSkippedText(node, context);
        const body = node.childForFieldName('body');
        const redirects = node.childrenForFieldName('redirect');
        if (body?.type === 'command') this.command(body, redirects, context, input);
        else if (body) {
          this.visit(body, context, standardInputOf(redirects) ?? input);
          for (const extra of redirects.flatMap(redirectedArguments)) {
            this.visit(extra, context, { kind: 'inherited' });
            this.unresolved(extra.text, 'a word after the redirection of a compound command');
          }
        }
        for (const redirect of redirects) this.redirect(redirect, context);
        return;
      }
      case 'pipeline': {
        let afterPipe = false;
        for (const child of node.children) {
              if (!child.isNamed) {
            if (child.type === '|' || child.type === '|&') afterPipe = true;
            continue;
          }
          this.visit(child, context, afterPipe ? { kind: 'pipe' } : input);
        }
        return;
      }
      case 'declaration_command':
      case 'unset_command':
        this.declaration(node, context);
        return;
      case 'variable_assignment':
        this.assignment(node, context);
        return;
      case 'function_definition': {
        const body = node.childForFieldName('body');
        if (body) this.visit(body, context, { kind: 'inherited' });
        return;
      }
      case 'file_redirect':
      case 'heredoc_redirect':
      case 'herestring_redirect':
        this.redirect(node, context);
        return;
      case 'arithmetic_expansion':
      case 'c_style_for_statement':
      case 'subscript':
        this.arithmetic(node);
        this.visitChildren(node, context);
        return;
      case 'compound_statement':
        if (node.firstChild?.type === '((') this.arithmetic(node);
        this.visitChildren(node, context);
        return;
      case 'test_command':
        this.testCommand(node);
        this.visitChildren(node, context);
        return;
      default:
        this.visitChildren(node, context);
    }
  }

  private visitChildren(node: SyntaxNode, context: Context): void {
    for (const child of node.namedChildren) if (child) this.visit(child, context, { kind: 'inherited' });
  }

  /**
   * Arithmetic reads a variable's value as an expression again, and an array subscript in that
   * value runs a command substitution (`x='a[$(rm -rf ~)]'; echo $((x))`).
   */
  private arithmetic(node: SyntaxNode): void {
    const names = node.descendantsOfType(['variable_name', 'simple_expansion', 'expansion', 'word', 'command_substitution']);
    if (names.some((name) => name.type !== 'word' || /^[A-Za-z_]/.test(name.text))) {
      this.unresolved(node.text, 'arithmetic on a variable evaluates its value, which can run commands');
    }
  }

  /** `[[ $x -eq 1 ]]` is arithmetic too; the `[` builtin only takes integers. */
  private testCommand(node: SyntaxNode): void {
    if (node.firstChild?.type !== '[[') return;
    for (const expression of node.descendantsOfType('binary_expression')) {
      const operator = expression.childForFieldName('operator')?.text;
      if (!operator || !/^-(eq|ne|lt|le|gt|ge)$/.test(operator)) continue;
      const operands = [expression.childForFieldName('left'), expression.childForFieldName('right')];
      // A bare name is a variable there too: `[[ x -eq 1 ]]` reads $x.
      const readsVariable = (operand: SyntaxNode | null) => operand !== null && (shellWord(operand).kind !== 'literal' || /^[A-Za-z_]/.test(operand.text));
      if (operands.some(readsVariable)) {
        this.unresolved(expression.text, 'an arithmetic comparison evaluates a variable\'s value, which can run commands');
      }
    }
  }

  private assignment(node: SyntaxNode, context: Context): void {
    const nameNode = node.childForFieldName('name');
    const name = nameNode?.type === 'subscript' ? nameNode.childForFieldName('name')?.text : nameNode?.text;
    const value = node.childForFieldName('value');
    if (name) this.checkVariable(name, value ? shellWord(value) : literalWord(''), node.text, context);
    this.visitChildren(node, context);
  }

  private checkVariable(name: string, value: ShellWord, text: string, context: Context): void {
    if (commandVariables.has(name)) {
      if (value.kind === 'literal') {
        if (value.value.trim() !== '') this.read(value.value, context.depth + 1);
      } else {
        this.unresolved(text, `${name} holds a command that a program runs, and its value is not known before it runs`);
      }
    } else if (sensitiveVariable.test(name)) {
      this.unresolved(text, `setting ${name} changes which program runs or what it loads`);
    }
  }

  /** `export`, `declare`, `local`, `readonly`, `typeset`, `unset`: commands, whose assignments count. */
  private declaration(node: SyntaxNode, context: Context): void {
    const words: ShellWord[] = [];
    for (const child of node.children) {
      if (!child.isNamed) {
        if (/^[a-z]+$/.test(child.type)) words.push(literalWord(child.type));
        continue;
      }
      if (child.type === 'variable_assignment') {
        this.assignment(child, context);
        words.push(shellWord(child));
      } else {
        this.visit(child, context, { kind: 'inherited' });
        words.push(child.type === 'variable_name' ? literalWord(child.text) : shellWord(child));
        if (child.type === 'word' || child.type === 'variable_name') {
          const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(child.text);
          if (assignment) this.checkVariable(assignment[1]!, shellWord(child), child.text, context);
        }
      }
    }
    // `declare -i n; n=$x` evaluates $x as arithmetic on every assignment.
    if (words.some((word) => word.kind === 'literal' && /^-[a-zA-Z]*i/.test(word.value))) this.unresolved(node.text, 'an integer variable evaluates what is assigned to it, which can run commands');
    this.record(words);
  }

  private command(node: SyntaxNode, outerRedirects: readonly SyntaxNode[], context: Context, input: StandardInput): void {
    this.checkSkippedText(node, context);
    const redirects: SyntaxNode[] = [];
    const parts: SyntaxNode[] = [];
    for (const child of node.namedChildren) {
      const type = child.type;
      if (type === 'variable_assignment') this.assignment(child, context);
      else if (type === 'file_redirect' || type === 'heredoc_redirect' || type === 'herestring_redirect') {
        this.redirect(child, context);
        redirects.push(child);
      } else if (type !== 'comment') parts.push(child);
    }
    redirects.push(...outerRedirects);
    // The grammar reads words after a redirection (`git push > out --force`) as part of it.
    parts.push(...redirects.flatMap(redirectedArguments));
    parts.sort((first, second) => first.startIndex - second.startIndex);
    const name = parts[0];
    // `x=1 >file` has no command; the grammar gives it an empty, missing name.
    if (!name || name.type !== 'command_name' || name.text === '') return;
    for (const part of parts) this.visit(part, context, { kind: 'inherited' });
    const words = parts.map(shellWord);
    // A call of a function defined before it runs the function's body, checked where it is defined;
    // a name with a slash (`/bin/rm`), or one run through `command` or `env`, is a program.
    const first = words[0]!;
    const definedAt = first.kind === 'literal' ? context.functions.get(first.value) : undefined;
    if (definedAt !== undefined && definedAt <= node.startIndex) return;
    this.resolve(words, context, standardInputOf(redirects) ?? input);
  }

  /** The command the words run, unwrapped, as one or more simple commands. */
  private resolve(words: readonly ShellWord[], context: Context, input: StandardInput): void {
    const first = words[0];
    if (!first) return;
    if (first.kind !== 'literal') {
      this.record(words);
      this.unresolved(first.text, `the command name ${first.text} is not known before it runs`);
      return;
    }
    const name = canonicalCommandName(first.value);
    if (reservedWords.has(first.value)) {
      // `time { rm x; }`: the grammar reads a reserved word as a command name where bash does not.
      this.record(words);
      this.unresolved(words.map((word) => word.text).join(' '), `the parser read the reserved word ${first.value} as a command`);
      return;
    }
    if (shells.has(name)) this.shell(words, context, input);
    else if (name === 'eval') this.evaluate(words, context);
    else if (name === 'find') this.find(words, context);
    else if (name === 'xargs') this.xargs(words, context);
    else if (name === 'coproc') this.coprocess(words, context, input);
    else if (name === 'alias' || name === 'trap') this.storedScripts(name, words, context);
    else if ((name === 'source' || name === '.') && words[1] && words[1].kind !== 'literal') {
      this.record(words);
      this.unresolved(words.map((word) => word.text).join(' '), `${name} runs a file whose name, or content, is not known before it runs`);
    }
    else if (Object.hasOwn(wrappers, name)) this.wrapper(name, words, context, input);
    else {
      if (name === 'cd' || name === 'pushd' || name === 'popd') this.analysis.changesDirectory = true;
      this.record(words);
    }
  }

  /** `coproc CMD` runs CMD; the grammar does not know `coproc NAME { … }`, which is then not resolved. */
  private coprocess(words: readonly ShellWord[], context: Context, input: StandardInput): void {
    if (words.some((word) => word.kind === 'literal' && /^[{(]/.test(word.value))) {
      this.record(words);
      this.unresolved(words.map((word) => word.text).join(' '), 'coproc with a compound command is not read');
      return;
    }
    this.resolve(words.slice(1), context, input);
  }

  /**
   * `alias NAME='…'` and `trap '…' SIGNAL` keep a script that runs later (an alias runs where the
   * shell expands aliases): it is read now, as if it ran here.
   */
  private storedScripts(name: string, words: readonly ShellWord[], context: Context): void {
    this.record(words);
    const scripts = name === 'trap'
      ? words.slice(1).filter((word) => !(word.kind === 'literal' && word.value.startsWith('-'))).slice(0, 1)
      : words.slice(1).filter((word) => word.kind !== 'literal' || word.value.includes('='));
    for (const script of scripts) {
      if (script.kind !== 'literal') {
        this.unresolved(words.map((word) => word.text).join(' '), `${name} keeps a command that is not known before it runs`);
      } else {
        const body = name === 'alias' ? script.value.slice(script.value.indexOf('=') + 1) : script.value;
        if (body.trim() !== '') this.read(body, context.depth + 1);
      }
    }
  }

  /** Text the grammar left out of the tree (`python3 - <<EOF` loses its `-`) makes the command unresolved. */
  private checkSkippedText(node: SyntaxNode, context: Context): void {
    let position = node.startIndex;
    for (const child of node.children) {
      if (child.startIndex > position && /\S/.test(context.source.slice(position, child.startIndex).replace(/\\\n/g, ''))) {
        this.unresolved(node.text, `the parser skipped "${context.source.slice(position, child.startIndex).trim()}"`);
        return;
      }
      position = Math.max(position, child.endIndex);
    }
  }

  private record(words: readonly ShellWord[]): void {
    this.analysis.commands.push({ words, text: words.map((word) => word.text).join(' ') });
  }

  private wrapper(name: string, words: readonly ShellWord[], context: Context, input: StandardInput): void {
    const unwrapped = unwrapCommand(name, words);
    const keeps = wrappers[name]!.keeps === true;
    // `exec >log 2>&1` only redirects the shell's own output.
    if (keeps || (unwrapped.kind === 'none' && !(name === 'exec' && words.length === 1))) this.record(words);
    switch (unwrapped.kind) {
      case 'command':
        for (const assignment of unwrapped.assignments) this.checkVariable(assignment.name, literalWord(assignment.value), `${assignment.name}=${assignment.value}`, context);
        this.resolve(unwrapped.words, context, input);
        return;
      case 'script':
        this.script(words, unwrapped.script, context);
        return;
      case 'shell':
        this.standardInputScript(words, context, input);
        return;
      case 'unresolved':
        if (!keeps) this.record(words);
        this.unresolved(words.map((word) => word.text).join(' '), unwrapped.reason);
        return;
      case 'none':
        return;
    }
  }

  private script(words: readonly ShellWord[], script: ShellWord, context: Context): void {
    if (script.kind === 'literal') this.read(script.value, context.depth + 1);
    else this.unresolved(words.map((word) => word.text).join(' '), `runs the shell string ${script.text}, which is not known before it runs`);
  }

  /** A shell: `-c STRING` is parsed; a script file is the command itself; no operand reads standard input. */
  private shell(words: readonly ShellWord[], context: Context, input: StandardInput): void {
    let index = 1;
    let commandString = false;
    let readsInput = false;
    for (; index < words.length; index += 1) {
      const word = words[index]!;
      if (word.kind !== 'literal') {
        this.record(words);
        this.unresolved(words.map((each) => each.text).join(' '), `the shell gets the argument ${word.text}, which is not known before it runs`);
        return;
      }
      const value = word.value;
      if (value === '--' || value === '-') {
        index += 1;
        break;
      }
      if (value.startsWith('--')) {
        if (value === '--rcfile' || value === '--init-file') index += 1;
        continue;
      }
      if (!/^[-+]./.test(value)) break;
      const letters = value.slice(1);
      if (letters.includes('c')) commandString = true;
      if (letters.includes('s')) readsInput = true;
      if (letters.includes('o') || letters.includes('O')) index += 1;
    }
    if (commandString) {
      const script = words[index];
      if (!script) this.unresolved(words.map((word) => word.text).join(' '), 'the shell has -c without a command string');
      else this.script(words, script, context);
      return;
    }
    if (index < words.length && !readsInput) {
      this.record(words);
      return;
    }
    this.standardInputScript(words, context, input);
  }

  /** A shell reading its commands from standard input: a literal here-doc is parsed, anything else is not known. */
  private standardInputScript(words: readonly ShellWord[], context: Context, input: StandardInput): void {
    const text = words.map((word) => word.text).join(' ');
    switch (input.kind) {
      case 'text':
        if (input.text === undefined) this.unresolved(`${text} ${input.redirection}`, 'a shell reads a script whose text is not known before it runs');
        else this.read(input.text, context.depth + 1);
        return;
      case 'pipe':
        this.unresolved(text, 'a shell reads its commands from a pipe, which are not known before they run');
        return;
      case 'file':
        this.unresolved(`${text} ${input.redirection}`, 'a shell reads its commands from a file, which is not checked');
        return;
      case 'inherited':
        this.unresolved(text, 'a shell reads its commands from standard input, which are not known before they run');
    }
  }

  private evaluate(words: readonly ShellWord[], context: Context): void {
    const rest = words.slice(1);
    if (rest.length === 0) return;
    if (rest.every((word) => word.kind === 'literal')) this.read(rest.map((word) => (word.kind === 'literal' ? word.value : '')).join(' '), context.depth + 1);
    else this.unresolved(words.map((word) => word.text).join(' '), 'eval runs a string that is not known before it runs');
  }

  /** `find … -exec CMD {} ;` runs CMD: both count. `{}` is a file name, unknown. */
  private find(words: readonly ShellWord[], context: Context): void {
    this.record(words);
    for (let index = 1; index < words.length; index += 1) {
      const word = words[index]!;
      if (word.kind !== 'literal') {
        this.unresolved(words.map((each) => each.text).join(' '), `find gets ${word.text}, which is not known before it runs and could be -exec`);
        return;
      }
      if (!['-exec', '-execdir', '-ok', '-okdir'].includes(word.value)) continue;
      const end = words.findIndex((candidate, position) => position > index && candidate.kind === 'literal' && (candidate.value === ';' || candidate.value === '+'));
      if (end === -1) {
        this.unresolved(words.map((each) => each.text).join(' '), `find ${word.value} has no closing ; or +`);
        return;
      }
      const many = (words[end] as { value: string }).value === '+';
      const inner = words.slice(index + 1, end).map((innerWord): ShellWord =>
        innerWord.kind === 'literal' && innerWord.value.includes('{}') ? { kind: many ? 'spread' : 'single', text: innerWord.text } : innerWord);
      this.resolve(inner, context, { kind: 'inherited' });
      index = end;
    }
  }

  /** `xargs CMD` runs CMD with arguments read from its input: unknown, appended (or put in place of `-I`'s string). */
  private xargs(words: readonly ShellWord[], context: Context): void {
    const unwrapped = unwrapCommand('xargs', words);
    if (unwrapped.kind === 'unresolved') {
      this.record(words);
      this.unresolved(words.map((word) => word.text).join(' '), unwrapped.reason);
      return;
    }
    if (unwrapped.kind !== 'command') {
      this.resolve([literalWord('echo'), appendedWords('(arguments from xargs)')], context, { kind: 'inherited' });
      return;
    }
    const replace = unwrapped.options.get('-I') ?? unwrapped.options.get('--replace') ?? (unwrapped.options.has('-i') ? literalWord('{}') : undefined);
    if (replace && replace.kind !== 'literal') {
      this.record(words);
      this.unresolved(words.map((word) => word.text).join(' '), 'the replace string of xargs -I is not known before it runs');
      return;
    }
    const inner = replace
      ? unwrapped.words.map((word): ShellWord => (word.kind === 'literal' && replace.value !== '' && word.value.includes(replace.value) ? { kind: 'single', text: word.text } : word))
      : [...unwrapped.words, appendedWords('(arguments from xargs)')];
    this.resolve(inner, context, { kind: 'inherited' });
  }

  private redirect(node: SyntaxNode, context: Context): void {
    if (node.type === 'file_redirect') {
      const operator = node.children.find((child) => !child.isNamed)?.type ?? '';
      const destination = node.childForFieldName('destination') ?? node.namedChildren.find((child) => child.type !== 'file_descriptor') ?? null;
      if (!destination) return;
      this.visit(destination, context, { kind: 'inherited' });
      const target = shellWord(destination);
      // `2>&1`, `>&-`, `<&3`: a descriptor, not a file.
      if ((operator === '>&' || operator === '<&') && target.kind === 'literal' && /^(\d+-?|-)$/.test(target.value)) return;
      if (destination.type === 'process_substitution') return;
      const access = operator === '<' ? 'read' : 'write';
      this.analysis.redirections.push({ operator, target, access, text: node.text });
      return;
    }
    // The grammar puts what follows a here-doc's operator on its line (`sh <<EOF | cat`) inside it.
    const words = new Set(redirectedArguments(node).map((argument) => argument.startIndex));
    for (const child of node.namedChildren) {
      if (['heredoc_start', 'heredoc_end', 'heredoc_content'].includes(child.type) || words.has(child.startIndex)) continue;
      if (child.type === 'heredoc_body') {
        if (!isQuotedHeredoc(node)) this.visitChildren(child, context);
        continue;
      }
      this.visit(child, context, { kind: 'inherited' });
    }
  }
}

/** Words the grammar put inside a redirection that are the command's arguments. */
function redirectedArguments(redirect: SyntaxNode): SyntaxNode[] {
  if (redirect.type === 'file_redirect') return redirect.childrenForFieldName('destination').slice(1);
  return redirect.type === 'heredoc_redirect' ? redirect.childrenForFieldName('argument') : [];
}

function isQuotedHeredoc(node: SyntaxNode): boolean {
  const start = node.namedChildren.find((child) => child.type === 'heredoc_start');
  return /['"\\]/.test(start?.text ?? '');
}

/** The standard input the last of these redirections gives, if any gives one. */
function standardInputOf(redirects: readonly SyntaxNode[]): StandardInput | undefined {
  let input: StandardInput | undefined;
  for (const redirect of redirects) {
    if (redirect.type === 'heredoc_redirect') {
      const body = redirect.namedChildren.find((child) => child.type === 'heredoc_body');
      const stripTabs = redirect.children.some((child) => child.type === '<<-');
      let text: string | undefined = body?.text ?? '';
      if (!isQuotedHeredoc(redirect)) {
        text = body && body.namedChildren.some((child) => child.type !== 'heredoc_content') ? undefined : text.replace(/\\([$`\\\n])/g, (_, character: string) => (character === '\n' ? '' : character));
      }
      if (text !== undefined && stripTabs) text = text.replace(/^\t+/gm, '');
      input = { kind: 'text', text, redirection: redirect.text };
    } else if (redirect.type === 'herestring_redirect') {
      const value = redirect.namedChildren[0];
      const word = value ? shellWord(value) : undefined;
      input = { kind: 'text', text: word?.kind === 'literal' ? word.value : undefined, redirection: redirect.text };
    } else if (redirect.type === 'file_redirect') {
      const descriptor = redirect.namedChildren.find((child) => child.type === 'file_descriptor')?.text;
      const operator = redirect.children.find((child) => !child.isNamed)?.type;
      if ((operator === '<' || operator === '<&' || operator === '<>') && (descriptor === undefined || descriptor === '0')) input = { kind: 'file', redirection: redirect.text };
    }
  }
  return input;
}

/** Where a definition runs surely, not in a subshell, a pipeline, a branch or a loop. */
const unconditionalScopes = new Set(['program', 'compound_statement', 'redirected_statement']);

/**
 * Functions defined unconditionally in this script, with the end of their first such definition.
 * A definition in a subshell or a branch may not exist when the name is called (`(rm() { :; }); rm -rf ~`
 * runs the program), and `unset -f` removes one, so a script that names `unset` gets none.
 */
function definedFunctions(source: string, root: SyntaxNode): Map<string, number> {
  const functions = new Map<string, number>();
  if (!source.includes('function') && !source.includes('(')) return functions;
  if (/unset/.test(source)) return functions;
  for (const definition of root.descendantsOfType('function_definition')) {
    let scope = definition.parent;
    while (scope && unconditionalScopes.has(scope.type) && scope.type !== 'program') scope = scope.parent;
    if (scope?.type !== 'program') continue;
    const nameNode = definition.childForFieldName('name');
    const name = nameNode ? shellWord(nameNode) : undefined;
    if (name?.kind === 'literal' && !functions.has(name.value)) functions.set(name.value, definition.endIndex);
  }
  return functions;
}
