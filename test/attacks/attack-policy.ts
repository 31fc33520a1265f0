/**
 * What the suite lets stand, and what fails CI. Under the locked-down configuration no goal may be
 * reached. Under the defaults no goal but exfiltration may be reached, and exfiltration only by a
 * route `docs/security.md` names in plain words together with the setting that closes it. `--trust
 * all` is reported, never failed: the user gave every grant.
 */
import type { AttackGoal } from './attack-case.js';
import type { AttackConfiguration } from './attack-configurations.js';

/**
 * Exfiltration routes open under the defaults, by case file name, each with the sentence of
 * docs/security.md that says so and names the setting that closes it. The test checks that the
 * sentence is really there.
 */
export const exfiltrationOpenUnderDefaults: Record<string, string> = {};

export function failsCi(configuration: AttackConfiguration, goal: AttackGoal, caseName: string): boolean {
  if (configuration === 'trust-all') return false;
  if (configuration === 'locked-down') return true;
  return !(goal === 'exfiltrate' && caseName in exfiltrationOpenUnderDefaults);
}
