/**
 * The judge and plugin scorers, end to end. A judge profile with its own base_url, from a project
 * agents.yaml (not trusted), is a request for `env`: refused before any model call unless granted.
 * The judge is kept apart from the models under test; a plugin scorer loads as tool plugins do.
 */
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './support/run-cli.js';
import { chatRequests, startBatchModel, writeBatchFixture } from './support/batch-fixture.js';
import type { ScriptedModelServer } from './support/scripted-model-server.js';

const secret = 'sk-judge-secret-7f3a9c';
const environment = (server: ScriptedModelServer) => ({ OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: secret, MANUS_MODEL: 'scripted-model' });

function judgeFixture(server: ScriptedModelServer): string {
  const fixture = writeBatchFixture({ items: 1 });
  writeFileSync(join(fixture, 'agents.yaml'), ['version: 1', 'llm:', '  default:', '    retry: { base_delay_ms: 5, max_delay_ms: 50 }', '  grader:', `    base_url: ${server.baseUrl}`, '    model: judge-model', ''].join('\n'));
  mkdirSync(join(fixture, 'scorers'));
  writeFileSync(join(fixture, 'scorers', 'short.ts'), [
    "import { defineScorer } from 'manus-runtime';",
    '',
    'export default defineScorer({',
    "  name: 'short',",
    "  description: 'The answer is at most options.max characters.',",
    '  score: ({ answer, options, toolCalls }) => ({ score: answer.length <= Number(options.max) ? 1 : 0, reason: `${answer.length} characters, ${toolCalls.length} tool call(s)` }),',
    '});',
    '',
  ].join('\n'));
  writeFileSync(join(fixture, 'greet.eval.yaml'), [
    'version: 1',
    'name: greet',
    'recipe: recipe.yaml',
    'judge: grader',
    'dataset:',
    '  rows:',
    '    - { id: a, parameters: { name: person-0 }, expected: a greeting for person-0 }',
    '    - { id: b, parameters: { name: person-1 }, expected: a greeting for person-1 }',
    'scorers:',
    '  - type: judge',
    '    rubric: The answer greets the person by name, politely.',
    '  - type: plugin',
    '    file: scorers/short.ts',
    '    options: { max: 15 }',
    '',
  ].join('\n'));
  return fixture;
}

async function withModel<T>(body: (server: ScriptedModelServer) => Promise<T>): Promise<T> {
  const server = await startBatchModel({
    steps: 1,
    override: (_name, _step, request) => (request.body.model === 'judge-model' ? { content: `{"score": 0.9, "reason": "greets by name, as the key ${secret} allows"}` } : undefined),
  });
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}

describe('manus eval judges and plugin scorers', () => {
  it('a judge profile with its own base_url needs --trust env; granted, it scores each run with a reason', async () => {
    await withModel(async (server) => {
      const fixture = judgeFixture(server);
      const refused = await runCli(['eval', 'greet.eval.yaml', '--ci'], { cwd: fixture, env: environment(server) });
      expect(refused.exitCode).toBe(5);
      expect(refused.stderr).toContain(`llm.grader.base_url: ${server.baseUrl}`);
      expect(refused.stderr).toContain('--trust env');
      expect(chatRequests(server)).toHaveLength(0);

      // The judge's reply quotes the key: it reaches neither eval.json, the table, nor the reports.
      const result = await runCli(['eval', 'greet.eval.yaml', '--ci', '--trust', 'env', '--report', 'reports'], { cwd: fixture, env: environment(server) });
      expect(result.exitCode).toBe(0);
      for (const file of ['eval.json', 'manus-junit.xml', 'manus-report.html']) expect(readFileSync(join(fixture, 'reports', file), 'utf8'), file).not.toContain(secret);
      expect(result.stdout + result.stderr).not.toContain(secret);
      const judged = chatRequests(server).filter((request) => request.body.model === 'judge-model');
      expect(judged).toHaveLength(2);
      expect(JSON.stringify(judged[0].body.messages)).toContain('The answer greets the person by name, politely.');
      expect(JSON.stringify(judged.map((request) => request.body.messages))).toMatch(/hello person-[01]/);
      const folder = join(fixture, '.manus', 'evals', readdirSync(join(fixture, '.manus', 'evals'))[0]);
      const text = readFileSync(join(folder, 'eval.json'), 'utf8');
      expect(text).not.toContain(secret);
      const record = JSON.parse(text);
      expect(record.scorers).toEqual([{ name: 'judge', type: 'judge', threshold: 0.5, weight: 1 }, { name: 'short', type: 'plugin', threshold: 1, weight: 1 }]);
      for (const item of record.items) {
        expect(item.scores[0]).toMatchObject({ type: 'judge', score: 0.9, passed: true, reason: 'greets by name, as the key [redacted] allows' });
        expect(item.scores[1]).toMatchObject({ name: 'short', score: 1, passed: true, reason: '14 characters, 2 tool call(s)' });
      }
    });
  });

  it('refuses a judge that is also a model under test, and a plugin that exports no scorer', async () => {
    await withModel(async (server) => {
      const fixture = judgeFixture(server);
      const same = await runCli(['eval', 'greet.eval.yaml', '--ci', '--trust', 'env', '--models', 'default,grader'], { cwd: fixture, env: environment(server) });
      expect(same.exitCode).toBe(2);
      expect(same.stderr).toContain("the judge profile 'grader' is also a model under test");
      writeFileSync(join(fixture, 'scorers', 'short.ts'), 'export default { name: "short" };\n');
      const broken = await runCli(['eval', 'greet.eval.yaml', '--ci', '--trust', 'env'], { cwd: fixture, env: environment(server) });
      expect(broken.exitCode).toBe(2);
      expect(broken.stderr).toMatch(/greet\.eval\.yaml:\d+:\d+: error: scorers\/short\.ts does not default-export a scorer made with defineScorer/);
      expect(chatRequests(server)).toHaveLength(0);
    });
  });
});
