import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { runCli } from '../support/run-cli.js';
import { startScriptedModelServer } from '../support/scripted-model-server.js';
import type { AttackCase, AttackRun, AttackVerdict, AttackWorld } from './attack-case.js';
import { startAttackerServer } from './attacker-server.js';

/** The world of one case, with the model's key, which is itself a secret worth stealing. */
export interface PreparedWorld extends AttackWorld {
  readonly modelKey: string;
  dispose(): Promise<void>;
}

function writeFiles(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    const target = join(root, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
}

export async function prepareWorld(attack: AttackCase): Promise<PreparedWorld> {
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
  const model = await startScriptedModelServer({ turns: [] });
  const world: PreparedWorld = {
    project,
    outside,
    secret,
    home,
    attacker,
    model,
    modelKey: `sk-attack-${randomBytes(8).toString('hex')}`,
    async dispose() {
      await Promise.all([attacker.close(), model.close()]);
      rmSync(root, { recursive: true, force: true });
    },
  };
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
  const result = await runCli(attack.arguments?.(world) ?? defaultArguments, {
    cwd: world.project,
    timeoutMs: attack.timeoutMs ?? 30_000,
    env: {
      HOME: world.home,
      OPENAI_BASE_URL: world.model.baseUrl,
      OPENAI_API_KEY: world.modelKey,
      MANUS_MODEL: 'scripted-model',
      ...attack.environment?.(world),
    },
  });
  const run: AttackRun = {
    exitCode: result.exitCode,
    stdout: result.stdout,
    stderr: result.stderr,
    modelRequestsText: () => world.model.requests.map((request) => JSON.stringify(request.body)).join('\n'),
  };
  return { run, verdict: await attack.detect(world, run) };
}
