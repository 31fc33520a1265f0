/**
 * `manus doctor` through the built command: the JSON shape, a missing Python reported with how to
 * fix it, the model endpoint probed without showing the key, checks a plugin contributes, and the
 * exit codes.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { probeBwrap } from '../runtime/services/sandbox/create-sandbox.js';
import { findDataPython } from './support/data-python.js';
import { makeFixture, runCli } from './support/run-cli.js';
import { startScriptedModelServer } from './support/scripted-model-server.js';

interface Finding {
  check: string;
  status: 'ok' | 'missing' | 'warning';
  detail: string;
  fix?: string;
  source: string;
}

const findingOf = (json: { findings: Finding[] }, check: string) => json.findings.find((finding) => finding.check === check);
const secretKey = 'sk-doctor-test-0123456789';
const dataPython = findDataPython();
const debianDataPython = spawnSync('/usr/bin/python3', ['-c', 'import pandas, numpy, matplotlib, openpyxl']).status === 0;
if (!debianDataPython) console.warn('the doctor\'s sandboxed Python test is skipped: /usr/bin/python3 does not import the data libraries');

/** A plugin whose tool reports one thing missing, to show that tools contribute their own checks. */
const pluginWithCheck = `import { defineTool } from 'manus-runtime';
export default defineTool({
  name: 'needs_gadget',
  description: 'Uses a gadget.',
  parameters: { type: 'object', properties: {} },
  doctor: (settings, context) => [{
    check: 'gadget',
    status: 'missing',
    detail: 'no gadget at ' + (context.environment.GADGET_PATH ?? 'the default place'),
    fix: 'apt-get install gadget',
  }],
  execute: () => 'done',
});
`;

describe('manus doctor', () => {
  it('reports each check as JSON, a missing Python with the fix, the endpoint without the key, and exits 7', async () => {
    const server = await startScriptedModelServer({ turns: [] });
    try {
      const run = await runCli(['doctor', '--agent', 'data_analysis', '--json'], {
        cwd: makeFixture({}),
        env: { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: secretKey, MANUS_MODEL: 'scripted-model', MANUS_PYTHON: '/nonexistent/bin/python3' },
        timeoutMs: 60_000,
      });
      expect(run.exitCode, run.stderr).toBe(7);
      expect(run.stdout).not.toContain(secretKey);
      expect(run.json).toMatchObject({ agent: 'data_analysis', ok: false, diagnostics: [] });
      for (const finding of run.json.findings as Finding[]) {
        expect(Object.keys(finding).sort()).toEqual(expect.arrayContaining(['check', 'detail', 'source', 'status']));
        expect(['ok', 'missing', 'warning']).toContain(finding.status);
        if (finding.status !== 'ok') expect(finding.fix, finding.check).toEqual(expect.any(String));
      }
      expect(run.json.findings.map((finding: Finding) => finding.check)).toEqual(['model key', 'model endpoint', 'bubblewrap', 'docker', 'python']);
      expect(findingOf(run.json, 'python')).toMatchObject({
        status: 'missing',
        source: 'python_execute',
        detail: expect.stringMatching(/^\/nonexistent\/bin\/python3 \(MANUS_PYTHON\) does not run/),
        fix: expect.stringContaining('MANUS_PYTHON'),
      });
      expect(findingOf(run.json, 'model key')).toMatchObject({ status: 'ok', detail: 'OPENAI_API_KEY is set (profile default)' });
      expect(findingOf(run.json, 'model endpoint')).toMatchObject({ status: 'ok', source: 'runtime', detail: expect.stringContaining(`${server.baseUrl} (profile default, model scripted-model) answers`) });
      const modelRequests = server.requests.filter((request) => request.path.endsWith('/models'));
      expect(modelRequests).toHaveLength(1);
      expect(modelRequests[0].headers.authorization).toBe(`Bearer ${secretKey}`);
    } finally {
      await server.close();
    }
  });

  it('prints one line per check with its status, and the fix under what is missing', async () => {
    const run = await runCli(['doctor', '--agent', 'data_analysis'], {
      cwd: makeFixture({}),
      env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', MANUS_MODEL: 'some-model', MANUS_PYTHON: '/nonexistent/bin/python3' },
      timeoutMs: 60_000,
    });
    expect(run.exitCode).toBe(7);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.find((line) => line.startsWith('missing python '))).toContain('/nonexistent/bin/python3 (MANUS_PYTHON) does not run');
    expect(lines.find((line) => line.startsWith('missing model endpoint '))).toContain('http://127.0.0.1:9/v1 (profile default, model some-model) does not answer');
    expect(lines.filter((line) => line.trimStart().startsWith('fix: ')).length).toBeGreaterThanOrEqual(2);
    expect(lines.at(-1)).toMatch(/^\d+ needed things are missing\.$/);
  });

  it.skipIf(!dataPython.python)('finds the data libraries in a Python that has them, and exits 0 when nothing needed is missing', async () => {
    const server = await startScriptedModelServer({ turns: [] });
    try {
      const run = await runCli(['doctor', '--agent', 'data_analysis', '--json'], {
        cwd: makeFixture({}),
        env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: 'scripted-model', MANUS_PYTHON: dataPython.python },
        timeoutMs: 60_000,
      });
      expect(findingOf(run.json, 'python')).toMatchObject({ status: 'ok', detail: expect.stringContaining(`${dataPython.python} (MANUS_PYTHON): Python 3.`) });
      expect(findingOf(run.json, 'python libraries')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^pandas \S+, numpy \S+, matplotlib \S+, openpyxl \S+$/) });
      const sandboxUsable = ['bubblewrap', 'docker'].some((check) => findingOf(run.json, check)?.status === 'ok');
      expect(run.json.ok).toBe(sandboxUsable);
      expect(run.exitCode).toBe(sandboxUsable ? 0 : 7);
    } finally {
      await server.close();
    }
  });

  it.skipIf(!debianDataPython)('checks the Python the run would use, in the sandbox it would use, not the first one on the host\'s PATH', async (context) => {
    if (!(await probeBwrap()).usable) {
      console.log('skipped: bubblewrap is not usable here');
      context.skip();
    }
    // Like a pyenv shim first on PATH: a python3 without the data libraries, in a folder the sandbox does not show (its /tmp is its own).
    const folder = makeFixture({ 'shims/python3': '#!/bin/sh\nexec /usr/bin/python3 -I -S "$@"\n' });
    chmodSync(join(folder, 'shims', 'python3'), 0o755);
    const run = await runCli(['doctor', '--agent', 'data_analysis', '--json'], {
      cwd: folder,
      env: { PATH: `${join(folder, 'shims')}:${process.env.PATH}`, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', MANUS_MODEL: 'some-model' },
      timeoutMs: 60_000,
    });
    expect(findingOf(run.json, 'python')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^python3 \(the first python3 on PATH\): Python 3\.\S+ at \/usr\/bin\/python3\S*, in bubblewrap$/) });
    expect(findingOf(run.json, 'python libraries')).toMatchObject({ status: 'ok' });
  });

  it('runs the checks that plugins contribute, with the environment', async () => {
    const run = await runCli(['doctor', '--json'], {
      cwd: makeFixture({ 'plugins/gadget.ts': pluginWithCheck }),
      env: { GADGET_PATH: '/opt/gadget', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', MANUS_MODEL: 'some-model' },
      timeoutMs: 60_000,
    });
    expect(run.exitCode).toBe(7);
    expect(findingOf(run.json, 'gadget')).toEqual({ check: 'gadget', status: 'missing', detail: 'no gadget at /opt/gadget', fix: 'apt-get install gadget', source: 'needs_gadget' });
    expect(run.json.findings.map((finding: Finding) => finding.check)).toEqual(expect.arrayContaining(['python', 'chromium']));
  });

  it('sends no key to an endpoint that a project\'s agents.yaml chose, and runs no program it names', async () => {
    const server = await startScriptedModelServer({ turns: [] });
    try {
      const projectAgents = [
        'version: 1',
        'llm:',
        `  default: { provider: openai-compatible, base_url: "${server.baseUrl}", api_key_env: OPENAI_API_KEY, model: scripted-model }`,
        'agents:',
        '  data_analysis:',
        '    tools: [python_execute, terminate]',
        '    tool_settings: { python_execute: { python: ./not-trusted-python } }',
        '',
      ].join('\n');
      const run = await runCli(['doctor', '--agent', 'data_analysis', '--json'], {
        cwd: makeFixture({ 'agents.yaml': projectAgents }),
        env: { OPENAI_API_KEY: secretKey, MANUS_PYTHON: '/nonexistent/bin/python3' },
        timeoutMs: 60_000,
      });
      const modelRequests = server.requests.filter((request) => request.path.endsWith('/models'));
      expect(modelRequests).toHaveLength(1);
      expect(modelRequests[0].headers.authorization).toBeUndefined();
      expect(findingOf(run.json, 'model endpoint')).toMatchObject({ status: 'ok' });
      expect(findingOf(run.json, 'python')?.detail).toMatch(/^\/nonexistent\/bin\/python3 \(MANUS_PYTHON\)/);
      expect(run.stdout).not.toContain('not-trusted-python');
    } finally {
      await server.close();
    }
  });

  it('needs the sandbox the agent asks for: docker missing for an agent that runs its code in docker', async () => {
    const run = await runCli(['doctor', '--agent', 'boxed', '--json'], {
      cwd: makeFixture({ 'agents.yaml': 'version: 1\nagents:\n  boxed:\n    tools: [terminate]\n    sandbox: docker\n' }),
      env: { MANUS_DOCKER_HOST: 'unix:///nonexistent/docker.sock', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', MANUS_MODEL: 'some-model' },
      timeoutMs: 60_000,
    });
    expect(run.exitCode).toBe(7);
    expect(findingOf(run.json, 'docker')).toMatchObject({ status: 'missing', detail: expect.stringContaining('unix:///nonexistent/docker.sock') });
    expect(findingOf(run.json, 'docker')?.fix).not.toContain('not needed');
    expect(findingOf(run.json, 'bubblewrap')?.status).not.toBe('missing');
  });

  it('refuses an agent that is not declared, with a suggestion, as a usage error', async () => {
    const run = await runCli(['doctor', '--agent', 'data_analysys'], { cwd: makeFixture({}) });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("no agent named 'data_analysys'");
    expect(run.stderr).toContain('data_analysis');
  });
});
