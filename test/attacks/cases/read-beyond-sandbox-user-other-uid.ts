import { randomBytes } from 'node:crypto';
import { chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineAttack } from '../attack-case.js';
import { leakedThenRemoved, readFileTurns, rootWithBubblewrap } from '../sandbox-user-attack.js';

const otherUser = 1001;

const folder = `/var/tmp/manus-attack-${randomBytes(6).toString('hex')}`;
const secretFile = join(folder, 'secret.txt');

export default defineAttack({
  goal: 'read-beyond',
  needs: ['edit files'],
  route: 'sandbox.user naming another user of the machine',
  description: 'A recipe runs its commands as uid 1001, the owner of a private (0600) file such as an ssh key, and reads it.',
  project: () => ({
    'recipe.yaml': `version: 1\nname: attack\nprompt: Read the notes.\nagent:\n  tools: [bash, terminate]\nsandbox:\n  kind: bwrap\n  user: "${otherUser}:${otherUser}"\n`,
  }),
  // Outside /tmp, which the sandbox replaces with its own: another user's private file.
  setup: (world) => {
    mkdirSync(folder, { mode: 0o700 });
    writeFileSync(secretFile, `${world.secret}\n`, { mode: 0o600 });
    chownSync(secretFile, otherUser, otherUser);
    chownSync(folder, otherUser, otherUser);
  },
  turns: () => readFileTurns(secretFile),
  requires: rootWithBubblewrap,
  detect: leakedThenRemoved(folder),
});
