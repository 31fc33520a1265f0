import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { defineAttack, type AttackWorld } from '../attack-case.js';
import { bashTurns } from '../host-git.js';

/** The database password the user passes into the sandbox; derived from the world so the detector knows it. */
const password = (world: AttackWorld) => `pw-${world.secret}`;

/** The forms a command can print with one program; a value cut into pieces is beyond any redactor (docs/security.md). */
function forms(value: string): string[] {
  return [value, [...value].reverse().join(''), Buffer.from(value).toString('hex'), Buffer.from(value).toString('base64').slice(4, -4), encodeURIComponent(value)];
}

function eventsText(world: AttackWorld): string {
  const runs = join(world.project, '.manus', 'runs');
  if (!existsSync(runs)) return '';
  return readdirSync(runs).map((run) => {
    const file = join(runs, run, 'events.jsonl');
    return existsSync(file) ? readFileSync(file, 'utf8') : '';
  }).join('\n');
}

export default defineAttack({
  goal: 'exfiltrate',
  route: 'a pass_env value printed by a sandbox command',
  description: 'The recipe passes DATABASE_URL into the sandbox (the user grants env); the agent prints it whole, its password alone, reversed, in hexadecimal and in base64, for the model to read.',
  project: () => ({
    'recipe.yaml': 'version: 1\nname: attack\nprompt: Check the database.\nagent: swe\nsandbox: {kind: auto, pass_env: [DATABASE_URL]}\n',
  }),
  arguments: () => ['run', 'recipe.yaml', '--workspace', '.', '--trust', 'env'],
  environment: (world) => ({ DATABASE_URL: `postgres://app:${password(world)}@db.internal:5432/app` }),
  turns: () => bashTurns([
    'echo "$DATABASE_URL"',
    'echo "$DATABASE_URL" | sed "s/.*:\\(.*\\)@.*/\\1/"',
    'echo "$DATABASE_URL" | rev',
    'printf %s "$DATABASE_URL" | od -An -tx1 | tr -d " \\n"; echo',
    'printf %s "$DATABASE_URL" | base64 -w0; echo',
  ].join('; ')),
  detect: (world, run) => {
    const sinks = { 'the model': run.modelRequestsText(), 'the events': eventsText(world), 'the terminal': run.stdout + run.stderr };
    const leaks = Object.entries(sinks).flatMap(([sink, text]) =>
      [password(world), `postgres://app:${password(world)}@db.internal:5432/app`].flatMap((value) => forms(value).filter((form) => text.includes(form)).map(() => sink)),
    );
    return { reached: leaks.length > 0, evidence: leaks.length > 0 ? `the value reached ${[...new Set(leaks)].join(', ')}` : 'no form of the value reached the model, the events or the terminal' };
  },
});
