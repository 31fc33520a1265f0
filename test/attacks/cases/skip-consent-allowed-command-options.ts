import { defineAttack } from '../attack-case.js';
import { bypassCase } from '../permission-bypass.js';

export default defineAttack(bypassCase(
  'options of an allowed command that run another program',
  'The allowed npm run test:* and python3 -m unittest:* with options that make them run something else: npm\'s script shell, node options, unittest loading an arbitrary module; and a redirection of an allowed command\'s output.',
  [
    'npm run test:unit --script-shell=/usr/bin/touch',
    'npm run test:unit --node-options="--eval=require(\'fs\').writeFileSync(\'pwned-node-options\',\'\')"',
    'npm run test:unit -- ; touch pwned-double-dash',
    'python3 -m unittest -k x "$(touch pwned-unittest-arg)"',
    'npm test --prefix=/ 2> pwned-stderr',
  ],
));
