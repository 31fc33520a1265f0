/**
 * Regenerates the demo recordings in recipes/recordings/ by running the shipped recipes against
 * the scripted model server. The replies are written here by hand, so the recordings show what the
 * runtime does with a model's replies, not what any particular model would say.
 * Run: npx tsx scripts/record-demos.ts [demo name ...]   (all of them when none is named)
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startScriptedModelServer, type ScriptedTurn } from '../test/support/scripted-model-server.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const terminate = (message: string): ScriptedTurn => ({ toolCalls: [{ name: 'terminate', arguments: { status: 'success', message } }] });

const demos: Array<{ name: string; args: string[]; turns: ScriptedTurn[]; prepare?: () => void }> = [
  {
    name: 'ask',
    args: ['recipes/ask.yaml'],
    turns: [{
      content: 'A ReAct agent interleaves reasoning and acting: at each step the model thinks about what it knows, ' +
        'chooses a tool call, reads the observation, and repeats until it can answer. It grounds its answers in ' +
        'what its tools return instead of relying on memory alone.',
    }],
  },
  {
    name: 'country-facts',
    args: ['recipes/country-facts.yaml', '--param', 'country=Japan'],
    turns: [{
      toolCalls: [{
        name: 'create_chat_completion',
        arguments: { response: { country: 'Japan', capital: 'Tokyo', languages: ['Japanese'], currency: 'Japanese yen (JPY)' } },
      }],
    }],
  },
  {
    name: 'swe',
    // The workspace starts as a copy of the example, and the recording says so, so that
    // `replay --tools real` prepares the same files again.
    args: [
      'recipes/swe.yaml', '--workspace-from', 'recipes/examples/calculator',
      '--param', 'repository=workspace/calculator-demo', '--param', 'issue=average() returns the wrong value',
    ],
    prepare: () => rmSync(join(root, 'workspace', 'calculator-demo'), { recursive: true, force: true }),
    // Only the summary line of unittest: the rest names timings, which no replay repeats exactly.
    turns: [
      { content: 'First I reproduce the failure.', toolCalls: [{ name: 'bash', arguments: { command: 'python3 -m unittest 2>&1 | tail -n 1' } }] },
      { content: 'Two tests fail in average(). Let me read it.', toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'view', path: 'calculator.py' } }] },
      {
        content: 'average() divides by one less than the number of values. The mean divides by the count.',
        toolCalls: [{
          name: 'str_replace_editor',
          arguments: { command: 'str_replace', path: 'calculator.py', old_str: 'return total(values) / (len(values) - 1)', new_str: 'return total(values) / len(values)' },
        }],
      },
      { content: 'Now the tests again.', toolCalls: [{ name: 'bash', arguments: { command: 'python3 -m unittest 2>&1 | tail -n 1' } }] },
      terminate('Fixed average() in calculator.py: it divided the total by len(values) - 1; it now divides by len(values). All 4 tests pass.'),
    ],
  },
  {
    name: 'project-tour',
    // The tour is of a copy of the example project; the filesystem server is the devDependency's.
    args: ['recipes/project-tour.yaml', '--workspace-from', 'recipes/examples/calculator'],
    turns: [
      { content: 'First, what the project holds.', toolCalls: [{ name: 'mcp_files_list_directory_with_sizes', arguments: { path: '.' } }] },
      { content: 'Two Python files: the code and its tests. I read the code.', toolCalls: [{ name: 'mcp_files_read_text_file', arguments: { path: 'calculator.py' } }] },
      { content: 'And the tests, to see how it is checked.', toolCalls: [{ name: 'mcp_files_read_text_file', arguments: { path: 'test_calculator.py' } }] },
      terminate([
        'This is a small Python calculator library with its tests (I read calculator.py and test_calculator.py).',
        'calculator.py defines total() and average() over a list of numbers; test_calculator.py checks both with unittest.',
        'Run `python3 -m unittest` in the project folder to check that it works; note that average() divides by',
        'len(values) - 1 rather than len(values), which the tests will question.',
      ].join(' ')),
    ],
  },
];

const chosen = process.argv.slice(2);
const unknown = chosen.filter((name) => !demos.some((demo) => demo.name === name));
if (unknown.length > 0) throw new Error(`no demo named ${unknown.join(', ')}; the demos are ${demos.map((demo) => demo.name).join(', ')}`);

for (const demo of demos.filter((each) => chosen.length === 0 || chosen.includes(each.name))) {
  demo.prepare?.();
  const server = await startScriptedModelServer({ turns: demo.turns });
  try {
    // The server answers from this process, so the command must run without blocking it.
    const child = spawn(process.execPath, [join(root, 'dist', 'bundle', 'main.js'), 'run', ...demo.args, '--record', `recipes/recordings/${demo.name}.jsonl`, '--quiet'], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: 'scripted-model' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const status = await new Promise((resolve) => child.on('close', resolve));
    process.stdout.write(`${demo.name}: exit ${String(status)}\n`);
  } finally {
    await server.close();
  }
}
