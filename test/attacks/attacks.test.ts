import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { AttackCase } from './attack-case.js';
import { prepareWorld, runAttack } from './attack-world.js';

/**
 * The standing attack suite: every file in cases/ is one attack a compromised model could make,
 * run end to end against the built command. A goal reached is a hole in the runtime.
 * `ATTACK=<case file name>` runs one case.
 */
const casesFolder = fileURLToPath(new URL('./cases/', import.meta.url));
const only = process.env.ATTACK;
const caseFiles = readdirSync(casesFolder)
  .filter((name) => name.endsWith('.ts'))
  .filter((name) => only === undefined || name.replace(/\.ts$/, '') === only)
  .sort();

const cases: Array<{ file: string; attack: AttackCase }> = await Promise.all(
  caseFiles.map(async (file) => ({ file, attack: ((await import(/* @vite-ignore */ new URL(`./cases/${file}`, import.meta.url).href)) as { default: AttackCase }).default })),
);

const outcomes: string[] = [];

describe('attacks under the defaults', () => {
  for (const { file, attack } of cases) {
    const missing = attack.requires?.();
    if (missing) console.warn(`skipped ${file}: ${missing}`);
    it.skipIf(missing !== undefined)(`${attack.goal}: ${attack.route} (${file})`, { timeout: (attack.timeoutMs ?? 30_000) + 30_000 }, async () => {
      const world = await prepareWorld(attack);
      try {
        const { run, verdict } = await runAttack(attack, world);
        outcomes.push(`${verdict.reached ? 'REACHED' : 'blocked'}  ${attack.goal.padEnd(12)} ${attack.route}`);
        expect(verdict.reached, `${attack.description}\n${verdict.evidence}\nexit ${run.exitCode}\n${run.stderr.slice(-2000)}`).toBe(false);
      } finally {
        await world.dispose();
      }
    });
  }
});

afterAll(() => {
  if (outcomes.length > 0) console.log(`attack outcomes under the defaults:\n${outcomes.join('\n')}`);
});
