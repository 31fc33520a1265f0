/**
 * The docker sandbox's image: .ci/setup-docker.sh and the runtime's default image name derive the
 * tag from one package list, so they agree, and a changed list names a new image. Where Docker has
 * the image, its Python imports what the data agents use.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxDefaults } from '../runtime/config/defaults.js';
import { probeDocker } from '../runtime/services/sandbox/docker-connection.js';
import { parseSandboxImagePackages, sandboxImageName, sandboxImagePackages } from '../runtime/config/sandbox-image.js';
import { sandboxImagePackagesPath } from '../runtime/config/sandbox-image-packages.js';
import { makeFixture, repositoryRoot, runCli } from './support/run-cli.js';
import { startScriptedModelServer } from './support/scripted-model-server.js';
import { terminate, toolMessages } from './support/loop-fixture.js';

const setupScript = join(repositoryRoot, '.ci', 'setup-docker.sh');

/** The image name the setup script would build, for the script as it sits in `root`. */
function scriptImage(script: string): string {
  const environment = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  const result = spawnSync('/bin/sh', [script, '--print-image'], { encoding: 'utf8', env: environment });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout.trim();
}

describe('the sandbox image', () => {
  it('is named the same by the setup script and by the runtime default', () => {
    expect(sandboxDefaults.image).toMatch(/^manus-sandbox:bookworm-[0-9a-f]{12}$/);
    expect(scriptImage(setupScript)).toBe(sandboxDefaults.image);
  });

  it('holds Python and the data libraries the agents import', () => {
    expect(sandboxImagePackages).toEqual(expect.arrayContaining(['python3-minimal', 'python3-numpy', 'python3-pandas', 'python3-matplotlib', 'python3-openpyxl']));
  });

  it('gets a new name when the list changes, derived alike by the script and the runtime, comments and blank lines aside', () => {
    const root = makeFixture({});
    mkdirSync(join(root, '.ci'));
    mkdirSync(join(root, 'runtime', 'config'), { recursive: true });
    copyFileSync(setupScript, join(root, '.ci', 'setup-docker.sh'));
    const list = '# a comment\npython3-minimal\n\n  python3-scipy   # trailing comment\n';
    writeFileSync(join(root, 'runtime', 'config', 'sandbox-image-packages.txt'), list);
    const changed = sandboxImageName(parseSandboxImagePackages(list));
    expect(parseSandboxImagePackages(list)).toEqual(['python3-minimal', 'python3-scipy']);
    expect(changed).not.toBe(sandboxDefaults.image);
    expect(scriptImage(join(root, '.ci', 'setup-docker.sh'))).toBe(changed);
  });

  it('is named in the schema only by where its list is, with no stale default', () => {
    const schema = JSON.parse(readFileSync(join(repositoryRoot, 'schemas', 'agents.schema.json'), 'utf8'));
    const image = schema.$defs.sandbox.anyOf[1].properties.image;
    expect(image.default).toBeUndefined();
    expect(image.description).toContain('runtime/config/sandbox-image-packages.txt');
    expect(sandboxImagePackagesPath).toBe('runtime/config/sandbox-image-packages.txt');
  });
});

const docker = await probeDocker(sandboxDefaults.image);
if (!docker.available) console.warn(`sandbox image contents test skipped: ${docker.reason}`);

describe.skipIf(!docker.available)('python_execute in the docker sandbox image', () => {
  it('imports pandas, numpy, matplotlib and openpyxl, and reads a CSV', async () => {
    const code = [
      'import matplotlib, numpy, openpyxl, pandas',
      "open('numbers.csv', 'w').write('n\\n1\\n2\\n4\\n')",
      "print('sum', int(pandas.read_csv('numbers.csv')['n'].sum()), 'backend', matplotlib.get_backend())",
    ].join('\n');
    const server = await startScriptedModelServer({ turns: [{ toolCalls: [{ name: 'python_execute', arguments: { code } }] }, terminate()] });
    try {
      const fixture = makeFixture({ 'recipe.yaml': 'version: 1\nname: boxed\nprompt: Sum it.\nagent: data_analysis\nsandbox: docker\n' });
      const run = await runCli(['run', 'recipe.yaml', '--json'], { cwd: fixture, env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: 'scripted-model' }, timeoutMs: 120_000 });
      expect(run.exitCode, run.stderr).toBe(0);
      const requests = server.requests.filter((request) => request.path.endsWith('/chat/completions'));
      expect(toolMessages(requests[1] as never).at(-1)!.content).toContain('sum 7 backend agg');
    } finally {
      await server.close();
    }
  });
});
