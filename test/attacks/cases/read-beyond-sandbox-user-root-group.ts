import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineAttack } from '../attack-case.js';
import { leakedThenRemoved, readFileTurns, rootWithBubblewrap } from '../sandbox-user-attack.js';

const folder = `/var/tmp/manus-attack-${randomBytes(6).toString('hex')}`;
const secretFile = join(folder, 'secret.txt');

export default defineAttack({
  goal: 'read-beyond',
  needs: ['edit files'],
  route: 'sandbox.user with the root group (gid 0)',
  description: 'A recipe runs its commands as "1001:0": the root group reads a root-owned file the group may read (0640), which nobody:nogroup could not.',
  project: () => ({
    'recipe.yaml': 'version: 1\nname: attack\nprompt: Read the notes.\nagent:\n  tools: [bash, terminate]\nsandbox:\n  kind: bwrap\n  user: "1001:0"\n',
  }),
  // Outside /tmp, which the sandbox replaces with its own: a root-owned file its group may read.
  setup: (world) => {
    mkdirSync(folder, { mode: 0o750 });
    writeFileSync(secretFile, `${world.secret}\n`, { mode: 0o640 });
  },
  turns: () => readFileTurns(secretFile),
  requires: rootWithBubblewrap,
  detect: leakedThenRemoved(folder),
});
