/**
 * The three ways the suite runs every attack and benign task: as a user runs a recipe today, as a
 * careful user locks a run down, and with every grant given, for contrast. A configuration is
 * applied by the harness alone (the user's own config file and command line), so case files stay
 * what an attacker wrote.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';

export type AttackConfiguration = 'defaults' | 'locked-down' | 'trust-all';

export const attackConfigurations: readonly AttackConfiguration[] = ['defaults', 'locked-down', 'trust-all'];

/** The host name of the benign site the utility tasks read; the only host a locked-down run may fetch. */
export const benignSiteHost = 'docs.example.test';

/** The host name of the attacker's collection server; treated as public, so the defence under test decides. */
export const attackerHost = 'collect.attacker.test';

/**
 * The narrowest toolbox the suite's benign tasks need (read a page, edit a file, run tests, make a
 * chart). Everything else asks, and with `on_ask: deny` an unattended run refuses it and tells the
 * model, which is how a careful user runs a recipe written by someone else.
 */
export const lockedDownPermissions = {
  default: 'ask',
  on_ask: 'deny',
  allow: [
    'terminate',
    'str_replace_editor(path=**)',
    'list_files',
    'file_search',
    'chart_visualization',
    'bash(npm test)',
    'bash(npm run test:*)',
    'bash(python3 -m unittest:*)',
    `web_fetch(domain=${benignSiteHost})`,
  ],
} as const;

/**
 * The egress allowlist of the locked-down configuration: the hosts a run may reach at all. It will
 * hold `[benignSiteHost]` as the user config's `network: { allow: [...] }` once the runtime reads
 * that setting; until then it is empty and nothing is written, and the permissions above alone keep
 * web_fetch to the benign site. Add the allowlist here and only here.
 */
export function lockedDownNetwork(): Record<string, unknown> | undefined {
  return undefined;
}

/** The user's own configuration file for a configuration, written into the world's fake home. */
export function writeUserConfiguration(configuration: AttackConfiguration, home: string): void {
  if (configuration !== 'locked-down') return;
  const folder = join(home, '.config', 'manus');
  mkdirSync(folder, { recursive: true });
  const network = lockedDownNetwork();
  writeFileSync(join(folder, 'config.yaml'), stringify({ version: 1, permissions: lockedDownPermissions, ...(network ? { network } : {}) }));
}

const commandsTakingTrust = new Set(['run', 'resume', 'replay', 'batch']);

/** The command line under a configuration: trust-all replaces whatever the case granted with `--trust all`. */
export function configuredArguments(configuration: AttackConfiguration, args: readonly string[]): string[] {
  if (configuration !== 'trust-all' || !commandsTakingTrust.has(args[0])) return [...args];
  const kept: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    if (args[index] === '--trust') index += 1;
    else if (!args[index].startsWith('--trust=')) kept.push(args[index]);
  }
  return [...kept, '--trust', 'all'];
}
