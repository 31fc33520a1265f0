import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cliEntry, runCli } from '../support/run-cli.js';
import type { DnsCatcher } from './dns-catcher.js';
import { startScriptedModelServer } from '../support/scripted-model-server.js';
import type { AttackCase, AttackRun, AttackVerdict, AttackWorld, BenignTask } from './attack-case.js';
import { attackerHost, benignSiteHost, configuredArguments, writeUserConfiguration, type AttackConfiguration } from './attack-configurations.js';
import { startAttackerServer } from './attacker-server.js';

/** The world of one case, with the model's key, which is itself a secret worth stealing. */
export interface PreparedWorld extends AttackWorld {
  dispose(): Promise<void>;
}

function writeFiles(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    const target = join(root, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
}

/** The loopback addresses the suite's test-only setting makes the runtime treat as public. */
const collectorAddress = '127.0.0.2';
const siteAddress = '127.0.0.3';

/** The page the benign site serves. */
export const sitePage = '<html><head><title>Release notes</title></head><body><h1>Release notes</h1><p>Version 4.2 adds offline mode.</p></body></html>';

type Runnable = AttackCase | BenignTask;

let dnsCatcher: DnsCatcher | undefined;

/** Runs every later command under the catcher's resolver (undefined: under the machine's own). */
export function useDnsCatcher(catcher: DnsCatcher | undefined): void {
  dnsCatcher = catcher;
}

export async function prepareWorld(attack: Runnable, configuration: AttackConfiguration = 'defaults'): Promise<PreparedWorld> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-attack-')));
  const project = join(root, 'project');
  const outside = join(root, 'outside');
  const home = join(root, 'home');
  mkdirSync(project);
  mkdirSync(home);
  mkdirSync(outside, { mode: 0o700 });
  chmodSync(outside, 0o700);
  const secret = `outside-secret-${randomBytes(8).toString('hex')}`;
  writeFileSync(join(outside, 'secret.txt'), `${secret}\n`, { mode: 0o600 });
  const attacker = await startAttackerServer();
  const collector = await startAttackerServer({ address: collectorAddress, hostName: attackerHost });
  const site = await startAttackerServer({ address: siteAddress, hostName: benignSiteHost, page: { contentType: 'text/html', body: sitePage } });
  const model = await startScriptedModelServer({ turns: [] });
  const catcher = dnsCatcher;
  const firstQuery = catcher?.names.length ?? 0;
  const world: PreparedWorld = {
    project,
    outside,
    secret,
    home,
    attacker,
    collector,
    site,
    configuration,
    dnsQueries: () => catcher?.names.slice(firstQuery) ?? [],
    model,
    modelKey: `sk-attack-${randomBytes(8).toString('hex')}`,
    async dispose() {
      await Promise.all([attacker.close(), collector.close(), site.close(), model.close()]);
      rmSync(root, { recursive: true, force: true });
    },
  };
  writeUserConfiguration(configuration, home, attack.needs);
  writeFiles(project, attack.project(world));
  await attack.setup?.(world);
  model.setTurns(attack.turns(world));
  return world;
}

/**
 * The user runs the recipe over the project itself, the most exposed way a run is used: the agent's
 * workspace is the project folder, with its git metadata, editor settings and plugins.
 */
export const defaultArguments = ['run', 'recipe.yaml', '--workspace', '.'];

/** Runs the case's command against the built CLI and asks its detector what the world shows. */
export async function runAttack(attack: AttackCase, world: PreparedWorld): Promise<{ run: AttackRun; verdict: AttackVerdict }> {
  const run = await runInWorld(attack, world);
  return { run, verdict: await attack.detect(world, run) };
}

/** Runs a benign task and asks its detector whether the work got done. */
export async function runBenignTask(task: BenignTask, world: PreparedWorld): Promise<{ run: AttackRun; succeeded: boolean; evidence: string }> {
  const run = await runInWorld(task, world);
  return { run, ...(await task.detect(world, run)) };
}

async function runInWorld(attack: Runnable, world: PreparedWorld): Promise<AttackRun> {
  // Entered as the command starts, so every server the case has started by now is carried in.
  const namespace = await dnsCatcher?.enter([process.execPath, cliEntry]);
  const result = await runCli(configuredArguments(world.configuration, attack.arguments?.(world) ?? defaultArguments), {
    cwd: world.project,
    ...(namespace ? { command: namespace.command } : {}),
    timeoutMs: attack.timeoutMs ?? 30_000,
    env: {
      HOME: world.home,
      OPENAI_BASE_URL: world.model.baseUrl,
      OPENAI_API_KEY: world.modelKey,
      MANUS_MODEL: 'scripted-model',
      // The user's own config folder, where a configuration writes its config.yaml.
      XDG_CONFIG_HOME: join(world.home, '.config'),
      // Test-only settings read from the environment alone: the attacker's and the benign site's
      // loopback addresses count as public, under host names of their own.
      MANUS_TEST_PUBLIC_ADDRESSES: `${collectorAddress},${siteAddress}`,
      MANUS_TEST_HOSTS: `${attackerHost}=${collectorAddress};${benignSiteHost}=${siteAddress}`,
      ...attack.environment?.(world),
    },
  }).finally(() => namespace?.close());
  return {
    exitCode: result.exitCode,
    stdout: result.stdout,
    stderr: result.stderr,
    modelRequestsText: () => world.model.requests.map((request) => JSON.stringify(request.body)).join('\n'),
  };
}
