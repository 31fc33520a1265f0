/**
 * Commands that run another command given in their arguments (`timeout 5 rm x`, `sudo -u x rm`),
 * and how to find it: which options take a value, how many operands come before the command, and
 * whether the wrapper matters on its own (changing user or root, it is a command of its own too).
 * A wrapper missing here is checked as its own command, with the command it runs as arguments.
 */
import type { ShellWord } from './shell-words.js';

interface WrapperSpecification {
  /** Options that take a value, in the next word or after `=` (long) or attached (short). */
  readonly valueOptions?: readonly string[];
  /** Options whose value is a shell script (`su -c 'rm x'`). */
  readonly scriptOptions?: readonly string[];
  /** Options after which nothing runs (`command -v rm`, `ionice -p 12`). */
  readonly noCommandOptions?: readonly string[];
  /** Options that cannot be followed (`env -S 'rm x'` splits a string into a command). */
  readonly unresolvedOptions?: readonly string[];
  /** Words between the options and the command: `timeout DURATION`, `chroot ROOT`. */
  readonly operands?: number;
  /** NAME=value words may come before the command (`env`, `sudo`). */
  readonly assignments?: boolean;
  /** `nice -5 rm`: a number given as an option. */
  readonly numericOptions?: boolean;
  /** Changes user, root or namespaces: the wrapper is a command of its own as well. */
  readonly keeps?: boolean;
  /** Without a command it starts a shell that reads commands from its input. */
  readonly shellWithoutCommand?: boolean | readonly string[];
  /** The command is one of these options' value only (`runuser -u user cmd`); otherwise a shell. */
  readonly commandOnlyWith?: readonly string[];
  /** Options that may come anywhere, not only before the command (GNU getopt order). */
  readonly optionsAnywhere?: boolean;
  /** The words are joined and run by `sh -c` (`watch 'rm x'`), unless one of these options is given. */
  readonly joinsScriptUnless?: readonly string[];
}

export const wrappers: Readonly<Record<string, WrapperSpecification>> = {
  env: { valueOptions: ['-u', '--unset', '-C', '--chdir'], unresolvedOptions: ['-S', '--split-string'], assignments: true },
  timeout: { valueOptions: ['-s', '--signal', '-k', '--kill-after'], operands: 1 },
  nice: { valueOptions: ['-n', '--adjustment'], numericOptions: true },
  nohup: {},
  time: { valueOptions: ['-o', '--output', '-f', '--format'] },
  command: { noCommandOptions: ['-v', '-V'] },
  exec: { valueOptions: ['-a'] },
  builtin: {},
  stdbuf: { valueOptions: ['-i', '-o', '-e', '--input', '--output', '--error'] },
  sudo: {
    valueOptions: ['-u', '-g', '-C', '-D', '-h', '-p', '-r', '-t', '-U', '-T', '-R', '--user', '--group', '--close-from', '--chdir', '--host', '--prompt', '--role', '--type', '--other-user', '--command-timeout', '--chroot'],
    noCommandOptions: ['-e', '--edit', '-l', '--list', '-v', '--validate', '-V', '--version', '-K', '--remove-timestamp'],
    assignments: true,
    keeps: true,
    shellWithoutCommand: ['-i', '-s', '--login', '--shell'],
  },
  doas: { valueOptions: ['-u', '-C'], keeps: true, shellWithoutCommand: ['-s'] },
  setsid: {},
  ionice: { valueOptions: ['-c', '-n', '--class', '--classdata'], noCommandOptions: ['-p', '-P', '-u', '--pid', '--pgid', '--uid'] },
  chrt: { valueOptions: ['-T', '-P', '-D', '--sched-runtime', '--sched-period', '--sched-deadline'], noCommandOptions: ['-p', '--pid', '-m', '--max'], operands: 1 },
  taskset: { noCommandOptions: ['-p', '--pid'], operands: 1 },
  flock: { valueOptions: ['-w', '--timeout', '-E', '--conflict-exit-code'], scriptOptions: ['-c', '--command'], operands: 1, optionsAnywhere: true },
  unbuffer: {},
  watch: { valueOptions: ['-n', '--interval', '-q', '--equexit'], joinsScriptUnless: ['-x', '--exec'] },
  nsenter: { valueOptions: ['-t', '--target', '-S', '--setuid', '-G', '--setgid'], keeps: true, shellWithoutCommand: true },
  chroot: { valueOptions: ['--userspec', '--groups'], operands: 1, keeps: true, shellWithoutCommand: true },
  su: { valueOptions: ['-s', '--shell', '-g', '--group', '-G', '--supp-group', '-w', '--whitelist-environment'], scriptOptions: ['-c', '--command', '--session-command'], keeps: true, optionsAnywhere: true, commandOnlyWith: [] },
  runuser: { valueOptions: ['-u', '--user', '-s', '--shell', '-g', '--group', '-G', '--supp-group', '-w', '--whitelist-environment'], scriptOptions: ['-c', '--command', '--session-command'], keeps: true, commandOnlyWith: ['-u', '--user'] },
  script: { valueOptions: ['-E', '--echo', '-I', '--log-in', '-O', '--log-out', '-B', '--log-io', '-T', '--log-timing', '-m', '--logging-format'], scriptOptions: ['-c', '--command'], keeps: true, optionsAnywhere: true, commandOnlyWith: [] },
  unshare: { valueOptions: ['-S', '--setuid', '-G', '--setgid', '-R', '--root', '-w', '--wd'], keeps: true, shellWithoutCommand: true },
  xargs: { valueOptions: ['-a', '--arg-file', '-d', '--delimiter', '-E', '-I', '-L', '-n', '--max-args', '-P', '--max-procs', '-s', '--max-chars', '--process-slot-var'] },
  strace: { valueOptions: ['-o', '-e', '-p', '-s', '-u', '-E', '-a', '-b', '-I', '-O', '-S', '-X', '-P'] },
  ltrace: { valueOptions: ['-o', '-e', '-p', '-s', '-u', '-a', '-n', '-A', '-D', '-F', '-l', '-x', '-w'] },
  fakeroot: { valueOptions: ['-l', '--lib', '--faked', '-s', '-i', '-b'] },
  torsocks: { valueOptions: ['-u', '-p', '-a', '-P'] },
  proxychains: { valueOptions: ['-f'] },
  proxychains4: { valueOptions: ['-f'] },
  faketime: { valueOptions: ['-m', '-f'], operands: 1 },
  catchsegv: {},
  busybox: {},
};

export type Unwrapped =
  | { kind: 'command'; words: ShellWord[]; options: ReadonlyMap<string, ShellWord | undefined>; assignments: ReadonlyArray<{ name: string; value: string }> }
  | { kind: 'script'; script: ShellWord; options: ReadonlyMap<string, ShellWord | undefined> }
  | { kind: 'none' }
  | { kind: 'shell' }
  | { kind: 'unresolved'; reason: string };

const assignmentWord = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;

/** What the wrapper named by the first word runs. */
export function unwrapCommand(name: string, words: readonly ShellWord[]): Unwrapped {
  const specification = wrappers[name]!;
  const options = new Map<string, ShellWord | undefined>();
  const assignments: Array<{ name: string; value: string }> = [];
  const operands: ShellWord[] = [];
  let script: ShellWord | undefined;
  let index = 1;
  while (index < words.length) {
    const word = words[index]!;
    if (word.kind !== 'literal') {
      // An unknown word where an operand goes is that operand (`timeout "$limit" rm`); anywhere
      // else it is taken as the command, which, unknown, is then not resolved.
      if (operands.length < (specification.operands ?? 0)) {
        operands.push(word);
        index += 1;
        continue;
      }
      break;
    }
    const value = word.value;
    if (value === '--') {
      index += 1;
      break;
    }
    const assignment = specification.assignments ? assignmentWord.exec(value) : null;
    if (assignment) {
      assignments.push({ name: assignment[1]!, value: assignment[2]! });
      index += 1;
      continue;
    }
    const option = readOption(specification, words, index);
    if (option === undefined) {
      if (operands.length < (specification.operands ?? 0)) {
        operands.push(word);
        index += 1;
        continue;
      }
      if (specification.optionsAnywhere && script === undefined) {
        const later = findScriptOption(specification, words, index);
        if (later) return { kind: 'script', script: later, options };
      }
      break;
    }
    if (option.kind === 'unresolved') return { kind: 'unresolved', reason: `${name} ${option.name} turns a string into a command, which is not followed` };
    for (const [optionName, optionValue] of option.options) options.set(optionName, optionValue);
    if (option.kind === 'no-command') return { kind: 'none' };
    if (option.kind === 'script') script = option.script;
    index = option.next;
  }
  if (script) return { kind: 'script', script, options };
  for (; operands.length < (specification.operands ?? 0) && index < words.length; index += 1) operands.push(words[index]!);
  const inner = words.slice(index);
  if (specification.joinsScriptUnless && !specification.joinsScriptUnless.some((option) => options.has(option))) {
    if (inner.length === 0) return { kind: 'none' };
    if (inner.some((word) => word.kind !== 'literal')) return { kind: 'unresolved', reason: `${name} runs its arguments as a shell script, and one of them is not known before it runs` };
    const text = inner.map((word) => (word.kind === 'literal' ? word.value : '')).join(' ');
    return { kind: 'script', script: { kind: 'literal', value: text, text }, options };
  }
  if (specification.commandOnlyWith && !specification.commandOnlyWith.some((option) => options.has(option))) return { kind: 'shell' };
  if (inner.length === 0) {
    const startsShell = specification.shellWithoutCommand === true
      || (Array.isArray(specification.shellWithoutCommand) && specification.shellWithoutCommand.some((option) => options.has(option)));
    return startsShell ? { kind: 'shell' } : { kind: 'none' };
  }
  return { kind: 'command', words: inner, options, assignments };
}

type OptionRead =
  | { kind: 'option' | 'no-command'; next: number; options: Array<[string, ShellWord | undefined]> }
  | { kind: 'script'; next: number; script: ShellWord; options: Array<[string, ShellWord | undefined]> }
  | { kind: 'unresolved'; name: string };

/** Reads the option at `index`, or undefined when that word is not an option. */
function readOption(specification: WrapperSpecification, words: readonly ShellWord[], index: number): OptionRead | undefined {
  const word = words[index]!;
  if (word.kind !== 'literal' || !word.value.startsWith('-') || word.value === '-') return undefined;
  const value = word.value;
  if (specification.numericOptions && /^-\d+$/.test(value)) return { kind: 'option', next: index + 1, options: [[value, undefined]] };
  const takes = (option: string, list: readonly string[] | undefined) => list?.includes(option) ?? false;
  if (value.startsWith('--')) {
    const equals = value.indexOf('=');
    const name = equals === -1 ? value : value.slice(0, equals);
    if (takes(name, specification.unresolvedOptions)) return { kind: 'unresolved', name };
    if (takes(name, specification.noCommandOptions)) return { kind: 'no-command', next: index + 1, options: [] };
    const takesValue = takes(name, specification.valueOptions) || takes(name, specification.scriptOptions);
    const optionValue: ShellWord | undefined = equals !== -1
      ? { kind: 'literal', value: value.slice(equals + 1), text: value.slice(equals + 1) }
      : takesValue ? words[index + 1] : undefined;
    const next = equals === -1 && takesValue ? index + 2 : index + 1;
    if (takes(name, specification.scriptOptions)) {
      if (!optionValue) return { kind: 'unresolved', name };
      return { kind: 'script', next, script: optionValue, options: [[name, optionValue]] };
    }
    return { kind: 'option', next, options: [[name, optionValue]] };
  }
  const options: Array<[string, ShellWord | undefined]> = [];
  for (let position = 1; position < value.length; position += 1) {
    const name = `-${value[position]}`;
    if (takes(name, specification.unresolvedOptions)) return { kind: 'unresolved', name };
    if (takes(name, specification.noCommandOptions)) return { kind: 'no-command', next: index + 1, options };
    if (takes(name, specification.valueOptions) || takes(name, specification.scriptOptions)) {
      const attached = value.slice(position + 1);
      const optionValue: ShellWord | undefined = attached ? { kind: 'literal', value: attached, text: attached } : words[index + 1];
      const next = attached ? index + 1 : index + 2;
      options.push([name, optionValue]);
      if (takes(name, specification.scriptOptions)) {
        if (!optionValue) return { kind: 'unresolved', name };
        return { kind: 'script', next, script: optionValue, options };
      }
      return { kind: 'option', next, options };
    }
    options.push([name, undefined]);
  }
  return { kind: 'option', next: index + 1, options };
}

/** The script of a script option after the operands (`flock FILE -c 'cmd'`, `su - root -c 'cmd'`). */
function findScriptOption(specification: WrapperSpecification, words: readonly ShellWord[], from: number): ShellWord | undefined {
  for (let index = from; index < words.length; index += 1) {
    const option = readOption(specification, words, index);
    if (option?.kind === 'script') return option.script;
  }
  return undefined;
}
