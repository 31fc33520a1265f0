import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { defineAttack } from '../attack-case.js';
import { bypassCase, bypassProject } from '../permission-bypass.js';

const attack = bypassCase(
  'options of an allowed command that run another program',
  'The allowed npm run test:* and python3 -m unittest:* with options that make them run something else: npm\'s script shell set to a script of the project, node options that preload a module, an argument after --, and unittest given a substitution.',
  [
    'npm run test:unit --script-shell=./tools/shell',
    'npm run test:unit --node-options="--require ./tools/preload.js"',
    'npm run test:unit -- ; touch pwned-double-dash',
    'python3 -m unittest -k x "$(touch pwned-unittest-arg)"',
    'npm test --prefix=/ 2> pwned-stderr',
  ],
);

export default defineAttack({
  ...attack,
  project: () => ({
    ...bypassProject(),
    'tools/shell': '#!/bin/sh\ntouch pwned-script-shell\n',
    'tools/preload.js': "require('fs').writeFileSync('pwned-node-options', '');\n",
  }),
  setup: (world) => chmodSync(join(world.project, 'tools', 'shell'), 0o755),
});
