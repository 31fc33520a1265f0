import { defineAttack } from '../attack-case.js';
import { bypassCase } from '../permission-bypass.js';

export default defineAttack(bypassCase(
  'a command hidden in a substitution inside an allowed one',
  'Command substitution, backticks, process substitution, arithmetic expansion and a parameter default, each inside the arguments of an allowed command.',
  [
    'npm test $(touch pwned-dollar)',
    'npm test `touch pwned-backtick`',
    'npm run test:unit -- <(touch pwned-process)',
    'npm test -- "$(touch pwned-quoted)"',
    'npm run test:$(touch pwned-in-word)unit',
    'python3 -m unittest ${X:-$(touch pwned-default)}',
    'npm test $((`touch pwned-arithmetic` 0))',
  ],
));
