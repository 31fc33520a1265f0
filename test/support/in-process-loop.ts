import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach } from 'vitest';
import { resolveRecipe, type RecipeOverrides } from '../../runtime/runs/recipe/resolve-recipe.js';
import { executeRun, type RunResult } from '../../runtime/runs/run.js';
import { readEvents } from './run-cli.js';
import { ScriptedChatModel, type ScriptedTurn } from './scripted-chat-model.js';

/**
 * Runs the real kernel in-process: a recipe written to a scratch folder, loading test plugins from
 * a folder beside it, resolved with `resolveRecipe` and run with `executeRun` against a
 * `ScriptedChatModel`. No process is started and no HTTP is spoken, so a failure points at the loop.
 */

/**
 * Test tools as a plugin file of plain objects, which is all a tool is. Plain JavaScript needs
 * neither the TypeScript transpiler nor the public entry point to load, so a test file's first run
 * starts in a fraction of a second; plugin-loading tests cover TypeScript plugins.
 */
const testTools = `import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

function pause(milliseconds, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, milliseconds);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

/** Waits, then says when it started and ended (performance.now(), one clock for the whole process). */
function timed(name, sequential) {
  return {
    name,
    description: 'Waits, then reports when it started and ended.',
    parameters: {
      type: 'object',
      properties: { label: { type: 'string' }, milliseconds: { type: 'integer' } },
      required: ['label', 'milliseconds'],
      additionalProperties: false,
    },
    sequential,
    async execute({ label, milliseconds }, context) {
      const started = performance.now();
      await pause(milliseconds, context.signal);
      return \`\${label} started=\${started} ended=\${performance.now()}\`;
    },
  };
}

export default [
  {
    name: 'echo',
    description: 'Returns the text it is given.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    execute: ({ text }) => \`echo: \${text}\`,
  },
  timed('wait'),
  timed('wait_in_line', true),
  timed('wait_in_group_a', 'group'),
  timed('wait_in_group_b', 'group'),
  {
    name: 'write_note',
    description: 'Writes a text file in the workspace.',
    permissionArguments: { path: 'path' },
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' }, text: { type: 'string' } },
      required: ['path', 'text'],
      additionalProperties: false,
    },
    execute({ path, text }, context) {
      writeFileSync(join(context.workspace, path), text);
      return { content: \`wrote \${path}\`, files: [path] };
    },
  },
  {
    name: 'pretend_shell',
    description: 'Says which command it would run; runs nothing.',
    permissionArguments: { command: 'command' },
    parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'], additionalProperties: false },
    execute: ({ command }) => \`would run: \${command}\`,
  },
  {
    name: 'fail',
    description: 'Always fails, with the message given.',
    parameters: { type: 'object', properties: { message: { type: 'string' } }, additionalProperties: false },
    execute({ message }) {
      throw new Error(message ?? 'the disk is on fire');
    },
  },
];
`;

/** A context provider: the state it shows names the step, so a test can tell a fresh one from a stale one. */
const testProvider = `export default {
  name: 'step_state',
  description: 'Shows the current step and the tools used lately.',
  render: ({ step, recentTools }) => ({ text: \`STATE at step \${step}; recent tools: \${[...recentTools].sort().join(',') || 'none'}\` }),
};
`;

export const defaultLoopTools = ['echo', 'wait', 'write_note', 'fail', 'terminate'];

export interface LoopRecipeOptions {
  /** No `agent:` section: the recipe's own text (a flow) says what runs. */
  omitAgent?: boolean;
  /** The agent's tools; `defaultLoopTools` unless given. */
  tools?: string[];
  /** Extra keys of the inline agent, as YAML lines. */
  agent?: string;
  /** Extra top-level keys of the recipe, as YAML lines. */
  recipe?: string;
  /** The `llm.default` profile of the agents.yaml beside the recipe, as YAML lines. */
  profile?: string;
  prompt?: string;
}

export interface InProcessRunOptions extends LoopRecipeOptions {
  /** Answers given as `--answer` would give them, in order. */
  answers?: string[];
  signal?: AbortSignal;
  overrides?: RecipeOverrides;
  /** Variables the run sees besides XDG_CONFIG_HOME. */
  environment?: Record<string, string>;
  /** More files beside the recipe, by relative path (executable when they start with #!). */
  files?: Record<string, string>;
  /** The folder the run's folder is made in, instead of the test file's temporary folder. */
  parent?: string;
  /** Symbolic links made in the run's folder, by relative path, to these targets. */
  links?: Record<string, string>;
  /** Permission bits of entries of the run's folder, by relative path, set once its files are written. */
  modes?: Record<string, number>;
  /** The permission bits of the run's folder, set once its files are written. */
  folderMode?: number;
  /** The user's own config.yaml, as YAML; none unless given. */
  userConfig?: string;
  /** With no one to approve a call: stop (the default, as `manus run`) or refuse it (as batch workers). */
  unansweredApproval?: 'stop' | 'deny';
}

export type RunEvent = Record<string, any>;

export interface InProcessRun {
  result: RunResult;
  model: ScriptedChatModel;
  /** The run's events.jsonl, parsed. */
  events: RunEvent[];
  /** The folder the run was started in, holding its recipe, workspace and run folder. */
  folder: string;
}

/**
 * Writes the test plugins into `folder/tools`: one copy per test file, so they load once, not
 * once per run.
 */
export function writeTestPlugins(folder: string): void {
  mkdirSync(join(folder, 'tools'), { recursive: true });
  writeFileSync(join(folder, 'tools', 'test-tools.mjs'), testTools);
  writeFileSync(join(folder, 'tools', 'step-state.mjs'), testProvider);
}

/** Writes recipe.yaml and the agents.yaml beside it into `folder`; the recipe loads plugins from `pluginFolder`. */
export function writeLoopRecipe(folder: string, pluginFolder: string, options: LoopRecipeOptions = {}): void {
  const indented = (text: string | undefined, indent: string) =>
    (text ?? '').split('\n').filter((line) => line.trim() !== '').map((line) => `${indent}${line}`);
  const recipe = [
    'version: 1',
    'name: loop-test',
    ...(options.omitAgent ? [] : [`prompt: ${JSON.stringify(options.prompt ?? 'Do the task.')}`]),
    `plugins: [${JSON.stringify(pluginFolder)}]`,
    ...(options.omitAgent ? [] : [
      'agent:',
      '  system_prompt: You are a test agent.',
      `  tools: [${(options.tools ?? defaultLoopTools).join(', ')}]`,
      ...indented(options.agent, '  '),
    ]),
    ...indented(options.recipe, ''),
  ].join('\n');
  const profile = indented(options.profile ?? 'provider: openai-compatible', '    ').join('\n');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'recipe.yaml'), `${recipe}\n`);
  writeFileSync(join(folder, 'agents.yaml'), `version: 1\nllm:\n  default:\n${profile}\n`);
}

/**
 * Returns a function that runs a recipe against scripted turns. Each run gets a folder of its own
 * (its recipe, workspace and run folder), removed after its test; the plugins are shared by the
 * runs of the test file.
 */
export function useInProcessRuns(): (script: ScriptedTurn[] | ScriptedChatModel, options?: InProcessRunOptions) => Promise<InProcessRun> {
  let root: string | undefined;
  let runCount = 0;
  const folders: string[] = [];
  afterEach(() => {
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });
  return async (script, options = {}) => {
    if (!root) {
      root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-loop-')));
      writeTestPlugins(root);
    }
    const folder = join(options.parent ?? root, `run-${(runCount += 1)}`);
    folders.push(folder);
    writeLoopRecipe(folder, options.parent ? join(root, 'tools') : '../tools', options);
    for (const [name, text] of Object.entries(options.files ?? {})) {
      mkdirSync(dirname(join(folder, name)), { recursive: true });
      writeFileSync(join(folder, name), text, { mode: text.startsWith('#!') ? 0o755 : 0o644 });
    }
    for (const [name, target] of Object.entries(options.links ?? {})) symlinkSync(target, join(folder, name));
    for (const [name, mode] of Object.entries(options.modes ?? {})) chmodSync(join(folder, name), mode);
    if (options.folderMode !== undefined) chmodSync(folder, options.folderMode);
    const model = script instanceof ScriptedChatModel ? script : new ScriptedChatModel(script);
    // The user's own configuration (trust grants) stays out of the test.
    const environment = { ...options.environment, XDG_CONFIG_HOME: join(folder, 'no-user-config') };
    if (options.userConfig !== undefined) {
      mkdirSync(join(environment.XDG_CONFIG_HOME, 'manus'), { recursive: true });
      writeFileSync(join(environment.XDG_CONFIG_HOME, 'manus', 'config.yaml'), options.userConfig);
    }
    const plan = await resolveRecipe('recipe.yaml', { cwd: folder, overrides: options.overrides, environment });
    const result = await executeRun(plan, {
      cwd: folder,
      environment,
      signal: options.signal ?? new AbortController().signal,
      interactive: false,
      answers: options.answers,
      model,
      unansweredApproval: options.unansweredApproval,
    });
    return { result, model, events: readEvents(result.runDirectory), folder };
  };
}

/** The events of one type, in order. */
export function eventsOfType(events: RunEvent[], type: string): RunEvent[] {
  return events.filter((event) => event.type === type);
}
