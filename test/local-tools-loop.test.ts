import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxDefaults } from '../runtime/config/defaults.js';
import { makeFixture, readEvents, repositoryRoot, runCli } from './support/run-cli.js';
import { startScriptedModelServer, type RecordedChatRequest, type ScriptedTurn } from './support/scripted-model-server.js';
import { terminate, toolMessages } from './support/loop-fixture.js';

/** Runs a recipe that uses the built-in tools, through the CLI, against a scripted model. */
async function runRecipe(recipe: string, turns: ScriptedTurn[], args: string[] = [], files: Record<string, string> = {}) {
  const fixture = makeFixture({ 'recipe.yaml': recipe, ...files });
  const server = await startScriptedModelServer({ turns });
  try {
    const result = await runCli(['run', 'recipe.yaml', '--json', ...args], {
      cwd: fixture,
      env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: 'scripted-model' },
      timeoutMs: 60_000,
    });
    const requests = server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
    return { ...result, requests, fixture };
  } finally {
    await server.close();
  }
}

const call = (name: string, args: Record<string, unknown>): ScriptedTurn => ({ toolCalls: [{ name, arguments: args }] });

describe('the built-in tools through the loop', () => {
  it('runs python, lists the files it made and keeps them in the workspace', async () => {
    const recipe = 'version: 1\nname: py\nprompt: Make a file.\nagent: data_analysis\n';
    const run = await runRecipe(recipe, [
      call('python_execute', { code: "open('report.txt', 'w').write('42')\nprint('written')" }),
      terminate('made report.txt'),
    ]);
    expect(run.exitCode).toBe(0);
    const [result] = toolMessages(run.requests[1]);
    expect(result.content).toContain('written');
    expect(result.content).toContain('report.txt');
    expect(run.json.files).toEqual(['report.txt']);
    expect(readFileSync(join(run.json.workspace, 'report.txt'), 'utf8')).toBe('42');
    const events = readEvents(run.json.runDirectory);
    expect(events.find((event) => event.type === 'tool-call-end')).toMatchObject({ tool: 'python_execute', isError: false, files: ['report.txt'] });
    expect(events.find((event) => event.type === 'sandbox-selected')).toMatchObject({ requested: 'auto', kind: 'bwrap', reason: 'bubblewrap works here' });
  });

  it('keeps a shell session across calls and edits, searches and lists files', async () => {
    const recipe = 'version: 1\nname: shell\nprompt: Work in the shell.\nagent: swe\n';
    const run = await runRecipe(recipe, [
      call('bash', { command: 'mkdir -p notes && cd notes && export GREETING=hello' }),
      call('bash', { command: 'echo "$GREETING from $(basename "$PWD")"' }),
      call('str_replace_editor', { command: 'create', path: 'notes/todo.md', file_text: 'buy milk\ncall Ada\n' }),
      call('str_replace_editor', { command: 'str_replace', path: 'notes/todo.md', old_str: 'call Ada', new_str: 'call Grace' }),
      call('file_search', { pattern: 'Grace' }),
      call('list_files', {}),
      terminate(),
    ]);
    expect(run.exitCode).toBe(0);
    const last = (index: number) => toolMessages(run.requests[index]).at(-1)!.content;
    expect(last(2)).toContain('hello from notes');
    expect(last(4)).toContain('has been edited');
    expect(last(5)).toContain('notes/todo.md:2');
    expect(last(6)).toContain('todo.md');
    expect(readFileSync(join(run.json.workspace, 'notes/todo.md'), 'utf8')).toBe('buy milk\ncall Grace\n');
    expect(run.json.files).toEqual(['notes/todo.md']);
  });

  it('refuses paths outside the workspace with an error result naming the rule', async () => {
    const recipe = 'version: 1\nname: escape\nprompt: Try to escape.\nagent: swe\n';
    const run = await runRecipe(recipe, [
      call('str_replace_editor', { command: 'view', path: '../../etc/passwd' }),
      call('str_replace_editor', { command: 'create', path: '.git/config', file_text: '[core]' }),
      terminate(),
    ]);
    expect(run.exitCode).toBe(0);
    expect(toolMessages(run.requests[1]).at(-1)!.content).toMatch(/outside the workspace/);
    expect(toolMessages(run.requests[2]).at(-1)!.content).toMatch(/\.git/);
  });

  it('keeps a plan in the run folder', async () => {
    const recipe = 'version: 1\nname: plan\nprompt: Plan it.\nagent: manus\n';
    const run = await runRecipe(recipe, [
      call('planning', { command: 'create', plan_id: 'trip', title: 'Trip', steps: ['Book', 'Pack'] }),
      call('planning', { command: 'mark_step', plan_id: 'trip', step_index: 0, step_status: 'completed' }),
      terminate(),
    ]);
    expect(run.exitCode).toBe(0);
    expect(toolMessages(run.requests[2]).at(-1)!.content).toContain('1/2');
    const plans = JSON.parse(readFileSync(join(run.json.runDirectory, 'plans.json'), 'utf8'));
    expect(plans.plans.trip.steps[0].status).toBe('completed');
  });

  it('answers ask_human from --answer, then from the recipe, and stops as needs-input without either', async () => {
    const recipe = [
      'version: 1',
      'name: ask',
      'prompt: Ask things.',
      'agent: manus',
      'answers:',
      '  favourite colour: green',
      '',
    ].join('\n');
    const run = await runRecipe(recipe, [
      call('ask_human', { question: 'Which city?' }),
      call('ask_human', { question: 'What is your favourite colour?' }),
      call('ask_human', { question: 'Anything else?' }),
      terminate(),
    ], ['--answer', 'Lisbon']);
    expect(run.exitCode).toBe(5);
    expect(toolMessages(run.requests[1]).at(-1)!.content).toContain('Lisbon');
    expect(toolMessages(run.requests[2]).at(-1)!.content).toContain('green');
    expect(run.requests).toHaveLength(3);
    expect(run.json).toMatchObject({ status: 'needs-input', question: 'Anything else?' });
  });

  it('stops with exit 5 when a required question has no one to answer it', async () => {
    const recipe = 'version: 1\nname: ask\nprompt: Ask.\nagent: manus\ntool_settings:\n  ask_human: { required: true }\n';
    const run = await runRecipe(recipe, [call('ask_human', { question: 'May I delete it?' }), terminate()]);
    expect(run.exitCode).toBe(5);
    expect(run.json).toMatchObject({ status: 'needs-input', question: 'May I delete it?' });
  });
});

const dockerImage = sandboxDefaults.image;
const docker = await (await import('../runtime/services/sandbox/docker-connection.js')).probeDocker(dockerImage);
if (!docker.available) console.warn(`docker sandbox loop tests skipped: ${docker.reason}`);

describe.skipIf(!docker.available)(`python in the docker sandbox through the loop${docker.available ? '' : ' (skipped: no Docker daemon or image)'}`, () => {
  it('runs code in a container without network as a non-root user, and removes the container', async () => {
    const recipe = `version: 1\nname: boxed\nprompt: Run it boxed.\nagent: data_analysis\nsandbox: { kind: docker, image: '${dockerImage}' }\n`;
    const run = await runRecipe(recipe, [
      call('python_execute', { code: "import os, socket\nprint('uid', os.getuid())\nopen('boxed.txt', 'w').write('inside')\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\n    print('network: yes')\nexcept OSError:\n    print('network: no')" }),
      terminate(),
    ]);
    expect(run.exitCode).toBe(0);
    const output = toolMessages(run.requests[1])[0].content;
    expect(output).toContain('network: no');
    expect(output).not.toContain('uid 0\n');
    expect(readFileSync(join(run.json.workspace, 'boxed.txt'), 'utf8')).toBe('inside');
    const { connectDocker } = await import('../runtime/services/sandbox/docker-connection.js');
    const client = await connectDocker();
    const left = await client.listContainers({ all: true, filters: { label: [`manus.run-id=${run.json.runId}`] } });
    expect(left).toEqual([]);
  });
});

describe('the swe recipe', () => {
  it('fixes the bug in the example repository: tests fail before and pass after', async () => {
    const repository = makeFixture({});
    cpSync(join(repositoryRoot, 'recipes', 'examples', 'calculator'), repository, { recursive: true });
    const runTests = () => {
      try {
        execFileSync('python3', ['-m', 'unittest'], { cwd: repository, stdio: 'pipe' });
        return 'pass';
      } catch {
        return 'fail';
      }
    };
    expect(runTests()).toBe('fail');

    const server = await startScriptedModelServer({
      turns: [
        call('bash', { command: 'python3 -m unittest 2>&1 | tail -n 3' }),
        call('str_replace_editor', { command: 'view', path: 'calculator.py' }),
        call('str_replace_editor', {
          command: 'str_replace',
          path: 'calculator.py',
          old_str: 'return total(values) / (len(values) - 1)',
          new_str: 'return total(values) / len(values)',
        }),
        call('bash', { command: 'python3 -m unittest 2>&1 | tail -n 1' }),
        terminate('average divided by one less than the number of values; it now divides by the count.'),
      ],
    });
    try {
      const run = await runCli(
        ['run', join(repositoryRoot, 'recipes', 'swe.yaml'), '--json', '--param', `repository=${repository}`, '--param', 'issue=average() returns wrong results'],
        { cwd: makeFixture({}), env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: 'scripted-model' }, timeoutMs: 60_000 },
      );
      expect(run.exitCode).toBe(0);
      const requests = server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
      expect(JSON.stringify(requests[0].body.messages)).toContain('average() returns wrong results');
      expect(toolMessages(requests[1]).at(-1)!.content).toMatch(/FAILED/);
      expect(toolMessages(requests[4]).at(-1)!.content).toMatch(/OK/);
      expect(run.json.workspace).toBe(repository);
      expect(run.json.files).toContain('calculator.py');
    } finally {
      await server.close();
    }
    expect(runTests()).toBe('pass');
    expect(existsSync(join(repository, 'test_calculator.py'))).toBe(true);
  });
});
