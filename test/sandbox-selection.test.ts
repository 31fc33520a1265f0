import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveRecipe } from '../runtime/runs/recipe/resolve-recipe.js';
import { executeRun } from '../runtime/runs/run.js';
import { chooseAutoSandbox } from '../runtime/services/sandbox/auto-sandbox.js';
import { diagnoseBwrapFailure } from '../runtime/services/sandbox/bwrap-diagnosis.js';
import { probeBwrap } from '../runtime/services/sandbox/create-sandbox.js';
import { probeDocker } from '../runtime/services/sandbox/docker-connection.js';
import { probeHostContainment } from '../runtime/services/sandbox/host-containment.js';
import { sandboxDefaults } from '../runtime/config/defaults.js';
import { runScripted, terminate, toolMessages, writeLoopFixture } from './support/loop-fixture.js';
import { cliEntry, makeFixture, readEvents, repositoryRoot, runCli } from './support/run-cli.js';
import { startScriptedModelServer, type ScriptedTurn } from './support/scripted-model-server.js';

// Whether this machine's Docker daemon could serve as the fallback; asked before it is hidden below.
const docker = await probeDocker(sandboxDefaults.image);
const dockerEnvironment = { DOCKER_HOST: process.env.DOCKER_HOST, MANUS_DOCKER_HOST: process.env.MANUS_DOCKER_HOST };
if (!docker.available) console.warn(`the Docker fallback test is skipped: ${docker.reason}`);

/**
 * A machine without bubblewrap, for real: a folder first on PATH whose `bwrap` fails the way a
 * bwrap without namespace rights does, and a Docker address where no daemon listens.
 */
const standIn = realpathSync(mkdtempSync(join(tmpdir(), 'manus-no-bwrap-')));
writeFileSync(join(standIn, 'bwrap'), '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n');
chmodSync(join(standIn, 'bwrap'), 0o755);
const noSandbox = { PATH: `${standIn}:${process.env.PATH}`, MANUS_DOCKER_HOST: `unix://${join(standIn, 'docker.sock')}` };
Object.assign(process.env, noSandbox);

/** Also no PID namespaces: an `unshare` that fails the way it does where namespaces are not allowed. */
const noNamespaces = join(standIn, 'no-namespaces');
mkdirSync(noNamespaces);
writeFileSync(join(noNamespaces, 'unshare'), '#!/bin/sh\necho "unshare: unshare failed: Operation not permitted" >&2\nexit 1\n');
chmodSync(join(noNamespaces, 'unshare'), 0o755);

afterAll(() => rmSync(standIn, { recursive: true, force: true }));

const hasScript = spawnSync('script', ['--version']).status === 0;
if (!hasScript) console.warn('the terminal question test is skipped: util-linux script, which gives the CLI a terminal, is missing');

/** Runs the CLI on a pseudo-terminal (util-linux `script`), typing `answer` as its input. */
async function runOnTerminal(fixture: string, answer: string, turns: ScriptedTurn[]): Promise<{ exitCode: number | null; output: string; json: any }> {
  const server = await startScriptedModelServer({ turns });
  try {
    const command = [process.execPath, cliEntry, 'run', 'recipe.yaml', '--json'].map((word) => `'${word}'`).join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: fixture,
      env: { ...noSandbox, HOME: tmpdir(), NO_COLOR: '1', OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model' },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stdin.end(`${answer}\n`);
    const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { exitCode, output, json: JSON.parse(/\{"runId".*\}/.exec(output)![0]) };
  } finally {
    await server.close();
  }
}

const bashCall = (command: string) => ({ toolCalls: [{ name: 'bash', arguments: { command } }] });
// The stand-in fails the way AppArmor makes bwrap fail on Ubuntu 24.04 and later: installed, but blocked.
const fix = 'load an AppArmor profile for bwrap (Ubuntu 25.04 ships /etc/apparmor.d/bwrap-userns-restrict), or on a throwaway CI runner run sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0; or start Docker';

describe('why bubblewrap is not usable', () => {
  it('tells a missing bwrap from one that AppArmor or the kernel blocks, with the fix for each', () => {
    const emptyPath = standIn.replace(/$/, '-nothing-here');
    expect(diagnoseBwrapFailure('spawn bwrap ENOENT', emptyPath)).toMatchObject({ problem: 'missing', fix: 'install bubblewrap (apt-get install bubblewrap)' });
    for (const detail of ['bwrap: setting up uid map: Permission denied', 'bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted']) {
      const diagnosis = diagnoseBwrapFailure(detail, standIn);
      expect(diagnosis).toMatchObject({ problem: 'blocked', reason: detail });
      expect(diagnosis.fix).toContain('kernel.apparmor_restrict_unprivileged_userns=0');
    }
    expect(diagnoseBwrapFailure('bwrap: Can\'t mount proc on /newroot/proc: Invalid argument', standIn)).toMatchObject({ problem: 'failed' });
  });

  it('says what to do when an installed bwrap fails the way AppArmor makes it fail, through the command line', async () => {
    const blocked = realpathSync(mkdtempSync(join(tmpdir(), 'manus-blocked-bwrap-')));
    try {
      writeFileSync(join(blocked, 'bwrap'), '#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n');
      chmodSync(join(blocked, 'bwrap'), 0o755);
      const run = await runScripted([bashCall('touch ran-on-host'), terminate()], {
        tools: ['bash', 'terminate'],
        args: ['--ci'],
        env: { ...noSandbox, PATH: `${blocked}:${process.env.PATH}` },
      });
      expect(run.exitCode).toBe(5);
      expect(run.json.error.message).toContain('bubblewrap is not usable here (bwrap: setting up uid map: Permission denied)');
      expect(run.json.error.message).toContain('sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0');
      expect(run.json.error.message).toContain('(--sandbox docker)');
    } finally {
      rmSync(blocked, { recursive: true, force: true });
    }
  });
});

describe('auto sandbox with no bubblewrap and no Docker', () => {
  it('finds bubblewrap unusable here, for real', async () => {
    expect(await probeBwrap()).toMatchObject({ usable: false, problem: 'blocked', reason: 'bwrap: No permissions to create new namespace' });
  });

  it('stops a CI run with exit 5 and the fix, and nothing runs on the host', async () => {
    const run = await runScripted([bashCall('touch ran-on-host; cat /etc/hostname'), terminate()], {
      tools: ['bash', 'terminate'],
      args: ['--ci'],
      env: noSandbox,
    });
    expect(run.exitCode).toBe(5);
    expect(run.json).toMatchObject({ status: 'permission-denied', error: { code: 'permission_denied' } });
    expect(run.json.error.message).toContain('bubblewrap is not usable here (bwrap: No permissions to create new namespace)');
    expect(run.json.error.message).toContain(fix);
    expect(run.json.error.message).toContain('--sandbox host (or --trust host)');
    // The model asked once and was never sent a result.
    expect(run.requests).toHaveLength(1);
    expect(existsSync(join(run.json.workspace, 'ran-on-host'))).toBe(false);
    const events = readEvents(run.json.runDirectory);
    expect(events.some((event) => event.type === 'tool-call-end')).toBe(false);
    expect(events.some((event) => event.type === 'sandbox-selected')).toBe(false);
  });

  it('runs on the host when the user chose it with --sandbox host, and says what is not covered where namespaces are not allowed', async () => {
    const run = await runScripted([bashCall('echo "pid $$"'), terminate()], {
      tools: ['bash', 'terminate'],
      args: ['--ci', '--sandbox', 'host'],
      env: { ...noSandbox, PATH: `${noNamespaces}:${noSandbox.PATH}` },
    });
    expect(run.exitCode).toBe(0);
    expect(toolMessages(run.requests[1])[0].content).toContain('pid ');
    const events = readEvents(run.json.runDirectory);
    expect(events.find((event) => event.type === 'run-start')).toMatchObject({ sandbox: 'host' });
    expect(events.find((event) => event.type === 'sandbox-selected')).toMatchObject({
      requested: 'host',
      kind: 'host',
      reason: 'chosen with --sandbox host',
      containment: { pidNamespace: false },
    });
    const warnings = events.filter((event) => event.type === 'run-warning').map((event) => event.message as string);
    expect(warnings[0]).toBe('code runs on the host without isolation (chosen with --sandbox host).');
    expect(warnings).toContain(
      'host commands are contained by process groups only, because a PID namespace cannot be made here (unshare: unshare failed: Operation not permitted): a process that leaves its group with setsid survives its command.',
    );
    expect(run.stderr).toContain('code runs on the host without isolation');
  });

  it('runs on the host when the run plan carries the user\'s host grant', async () => {
    const fixture = writeLoopFixture({ tools: ['bash', 'terminate'] });
    const server = await startScriptedModelServer({ turns: [bashCall('echo on-the-host'), terminate()] });
    try {
      const plan = await resolveRecipe(join(fixture, 'recipe.yaml'), { cwd: fixture, overrides: { trust: ['host'] } });
      expect(plan.trustGrants.has('host')).toBe(true);
      const result = await executeRun(plan, {
        cwd: fixture,
        environment: { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model' },
        signal: new AbortController().signal,
        interactive: false,
      });
      expect(result.status).toBe('success');
      const selected = readEvents(result.runDirectory).find((event) => event.type === 'sandbox-selected');
      const containment = await probeHostContainment();
      expect(selected).toMatchObject({ requested: 'auto', kind: 'host', containment: { pidNamespace: containment.namespace !== undefined } });
      expect(selected!.reason).toContain('the user allowed code on the host (--trust host)');
      const [reply] = (server.requests.at(-1)!.body as { messages: Array<{ role: string; content: string }> }).messages.filter((message) => message.role === 'tool');
      expect(reply.content).toContain('on-the-host');
    } finally {
      await server.close();
      rmSync(fixture, { recursive: true, force: true });
    }
  });

  it('still runs the README\'s first recipe (the assistant, which runs no code) without choosing a sandbox', async () => {
    const fixture = makeFixture({});
    const server = await startScriptedModelServer({ turns: [{ content: 'An agent that reasons and acts in turns.' }] });
    try {
      const run = await runCli(['run', join(repositoryRoot, 'recipes', 'ask.yaml'), '--ci', '--json'], {
        cwd: fixture,
        env: { ...noSandbox, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model' },
      });
      expect(run.exitCode).toBe(0);
      expect(run.json.answer).toBe('An agent that reasons and acts in turns.');
      const events = readEvents(run.json.runDirectory);
      expect(events.find((event) => event.type === 'run-start')).toMatchObject({ sandbox: 'auto' });
      expect(events.some((event) => event.type === 'sandbox-selected')).toBe(false);
    } finally {
      await server.close();
      rmSync(fixture, { recursive: true, force: true });
    }
  });

  it('asks the person at a terminal once, and refuses unless they say yes', async () => {
    const requested = { kind: 'auto' as const, network: false, options: {} };
    const questions: string[] = [];
    const asking = (answer: string) => async (question: string) => {
      questions.push(question);
      return answer;
    };
    const agreed = await chooseAutoSandbox(requested, { trustGrants: new Set(), ask: asking('y') });
    expect(agreed.settings.kind).toBe('host');
    expect(agreed.reason).toContain('the user agreed at the terminal');
    expect(questions[0]).toMatch(
      /^bubblewrap is not usable here \(bwrap: No permissions to create new namespace\) and no Docker daemon answers at .*; run code on the host without isolation\? \[y\/N\]$/,
    );
    const declined = chooseAutoSandbox(requested, { trustGrants: new Set(), ask: asking('') });
    await expect(declined).rejects.toMatchObject({ code: 'permission_denied' });
    await expect(declined).rejects.toThrow(fix);
    expect(questions).toHaveLength(2);
  });

  it.skipIf(!hasScript)('asks at a real terminal, runs on the host on yes and stops with exit 5 on no', async () => {
    const fixture = writeLoopFixture({ tools: ['bash', 'terminate'] });
    try {
      const agreed = await runOnTerminal(fixture, 'y', [bashCall('echo "on the host: $((6 * 7))"'), terminate()]);
      expect(agreed.output).toContain('run code on the host without isolation? [y/N]');
      expect(agreed.exitCode).toBe(0);
      expect(readEvents(agreed.json.runDirectory).find((event) => event.type === 'tool-call-end')!.content).toContain('on the host: 42');
      const declined = await runOnTerminal(fixture, 'n', [bashCall('touch ran-on-host'), terminate()]);
      expect(declined.exitCode).toBe(5);
      expect(declined.json.error.message).toContain('you declined to run it on the host without isolation');
      expect(existsSync(join(declined.json.workspace, 'ran-on-host'))).toBe(false);
    } finally {
      rmSync(fixture, { recursive: true, force: true });
    }
  });

  it('accepts auto in recipes and agents files', async () => {
    const fixture = writeLoopFixture({ recipeExtra: 'sandbox: { kind: auto, memory_mb: 256 }' });
    mkdirSync(join(fixture, 'more'));
    writeFileSync(join(fixture, 'more', 'agents.yaml'), 'version: 1\nagents:\n  coder:\n    system_prompt: Code.\n    tools: [bash]\n    sandbox: auto\n');
    try {
      const run = await runCli(['validate', 'recipe.yaml', 'more/agents.yaml'], { cwd: fixture });
      expect(run.stderr).toContain('0 error(s)');
      expect(run.exitCode).toBe(0);
    } finally {
      rmSync(fixture, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!docker.available)('auto sandbox with no bubblewrap and a Docker daemon', () => {
  it('chooses Docker', async () => {
    Object.assign(process.env, dockerEnvironment);
    if (dockerEnvironment.MANUS_DOCKER_HOST === undefined) delete process.env.MANUS_DOCKER_HOST;
    try {
      const choice = await chooseAutoSandbox({ kind: 'auto', network: false, options: {} }, { trustGrants: new Set(['host']) });
      expect(choice.settings.kind).toBe('docker');
      expect(choice.reason).toContain(`a Docker daemon answers and has the image ${sandboxDefaults.image}`);
    } finally {
      Object.assign(process.env, noSandbox);
    }
  });
});
