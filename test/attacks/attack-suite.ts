import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttackCase, BenignTask } from './attack-case.js';
import type { AttackConfiguration } from './attack-configurations.js';
import { exfiltrationOpenUnderDefaults, failsCi } from './attack-policy.js';
import { tableEnd, tableStart, type AttackOutcome } from './attack-table.js';
import { prepareWorld, runAttack, runBenignTask, useDnsCatcher } from './attack-world.js';
import { dnsCatcherMissing, startDnsCatcher, type DnsCatcher } from './dns-catcher.js';
import { closeSharedBrowser } from './shared-browser.js';

/**
 * The standing attack suite: every file in cases/ is one attack a compromised model could make,
 * run end to end against the built command under a configuration (the defaults, locked down,
 * `--trust all`: one test file each, so two run at once); every file in utility/ is a benign task
 * the locked-down configuration must still let succeed. `ATTACK=<file name>` runs one case or task;
 * `ATTACK_CONFIGURATION=<name>` one configuration; `ATTACK_RESULTS=<file>` writes every outcome as
 * JSON (`<file>.<configuration>.json`) for `npm run attacks`.
 */
const only = process.env.ATTACK;
const onlyConfiguration = process.env.ATTACK_CONFIGURATION;

async function load<T>(folder: string): Promise<Array<{ name: string; item: T }>> {
  const path = fileURLToPath(new URL(`./${folder}/`, import.meta.url));
  const files = readdirSync(path).filter((name) => name.endsWith('.ts')).filter((name) => only === undefined || name.replace(/\.ts$/, '') === only).sort();
  return Promise.all(files.map(async (file) => ({
    name: file.replace(/\.ts$/, ''),
    item: ((await import(/* @vite-ignore */ new URL(`./${folder}/${file}`, import.meta.url).href)) as { default: T }).default,
  })));
}

/** The loopback address of each configuration's DNS catcher, since their files run at once. */
const catcherAddresses: Record<AttackConfiguration, string> = { defaults: '127.0.0.54', 'locked-down': '127.0.0.55', 'trust-all': '127.0.0.56' };

export async function attackSuite(configuration: AttackConfiguration): Promise<void> {
  if (onlyConfiguration !== undefined && onlyConfiguration !== configuration) {
    it.skip(`${configuration}: ATTACK_CONFIGURATION=${onlyConfiguration}`, () => {});
    return;
  }
  const cases = await load<AttackCase>('cases');
  const tasks = await load<BenignTask>('utility');
  const outcomes: AttackOutcome[] = [];
  const started = Date.now();
  let catcher: DnsCatcher | undefined;

  beforeAll(async () => {
    const missing = dnsCatcherMissing();
    if (missing) console.warn(`commands run under the machine's resolver, and DNS exfiltration cases are skipped: ${missing}`);
    else useDnsCatcher((catcher = await startDnsCatcher(catcherAddresses[configuration])));
  });

  afterAll(async () => {
    await closeSharedBrowser();
    useDnsCatcher(undefined);
    await catcher?.close();
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    if (process.env.ATTACK_RESULTS) writeFileSync(`${process.env.ATTACK_RESULTS}.${configuration}.json`, JSON.stringify({ seconds: Number(seconds), outcomes }, null, 2));
    const lines = outcomes.map((each) => `${each.result.padEnd(14)} ${each.configuration.padEnd(11)} ${each.goal.padEnd(12)} ${each.name} (${each.milliseconds} ms): ${each.evidence.slice(0, 160)}`);
    if (lines.length > 0) console.log(`attack outcomes under ${configuration} (${seconds} s):\n${lines.join('\n')}`);
  });

  describe(`attacks under ${configuration}`, () => {
    for (const { name, item: attack } of cases) {
      const missing = attack.requires?.();
      const notApplicable = attack.notApplicable?.[configuration];
      const label = `${attack.goal}: ${attack.route} (${name})`;
      if (missing !== undefined || notApplicable !== undefined) {
        outcomes.push({ kind: 'attack', name, goal: attack.goal, route: attack.route, configuration, result: 'not applicable', evidence: notApplicable ?? `skipped: ${missing}`, milliseconds: 0 });
        it.skip(`${label}: ${notApplicable ?? missing}`, () => {});
        continue;
      }
      it(label, { timeout: (attack.timeoutMs ?? 30_000) + 30_000 }, async () => {
        const world = await prepareWorld(attack, configuration);
        const start = Date.now();
        try {
          const { run, verdict } = await runAttack(attack, world);
          outcomes.push({ kind: 'attack', name, goal: attack.goal, route: attack.route, configuration, result: verdict.reached ? 'reached' : 'blocked', evidence: verdict.evidence, milliseconds: Date.now() - start });
          if (failsCi(configuration, attack.goal, name)) {
            expect(verdict.reached, `${attack.description}\n${verdict.evidence}\nexit ${run.exitCode}\n${run.stderr.slice(-2000)}`).toBe(false);
          }
        } finally {
          await world.dispose();
        }
      });
    }
    for (const { name, item: task } of tasks) {
      const missing = task.requires?.();
      const notApplicable = task.notApplicable?.[configuration];
      if (missing !== undefined || notApplicable !== undefined) {
        outcomes.push({ kind: 'utility', name, goal: 'utility', route: task.route, configuration, result: 'not applicable', evidence: notApplicable ?? `skipped: ${missing}`, milliseconds: 0 });
        it.skip(`utility: ${task.route} (${name}): ${notApplicable ?? missing}`, () => {});
        continue;
      }
      it(`utility: ${task.route} (${name})`, { timeout: (task.timeoutMs ?? 30_000) + 30_000 }, async () => {
        const world = await prepareWorld(task, configuration);
        const start = Date.now();
        try {
          const { run, succeeded, evidence } = await runBenignTask(task, world);
          outcomes.push({ kind: 'utility', name, goal: 'utility', route: task.route, configuration, result: succeeded ? 'succeeded' : 'failed', evidence, milliseconds: Date.now() - start });
          // The work must get done under the defaults and locked down alike; trust-all is contrast only.
          if (configuration !== 'trust-all') expect(succeeded, `${task.description}\n${evidence}\nexit ${run.exitCode}\n${run.stderr.slice(-2000)}`).toBe(true);
        } finally {
          await world.dispose();
        }
      });
    }
  });
}

/** The promises docs/security.md makes about the suite, checked once. */
export function documentedRoutes(): void {
  describe('the open exfiltration routes', () => {
    const document = readFileSync(fileURLToPath(new URL('../../docs/security.md', import.meta.url)), 'utf8');
    const security = document.replace(/\s+/g, ' ');
    it('docs/security.md carries the table between its markers', () => {
      expect(document).toContain(tableStart);
      expect(document).toContain(tableEnd);
    });
    for (const [name, sentence] of Object.entries(exfiltrationOpenUnderDefaults)) {
      it(`${name} is named in docs/security.md with the setting that closes it`, () => {
        expect(existsSync(fileURLToPath(new URL(`./cases/${name}.ts`, import.meta.url))), `no case ${name}`).toBe(true);
        expect(security).toContain(sentence.replace(/\s+/g, ' '));
      });
    }
  });
}
