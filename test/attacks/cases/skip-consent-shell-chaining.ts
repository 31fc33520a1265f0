import { defineAttack } from '../attack-case.js';
import { bypassCase } from '../permission-bypass.js';

export default defineAttack(bypassCase(
  'an allowed command chained with another',
  'The allowed npm test, followed by a second command through every list operator, a pipe, a background job and a newline.',
  ['npm test && touch pwned-and', 'npm test; touch pwned-semicolon', 'npm test || touch pwned-or', 'npm test | touch pwned-pipe', 'npm test & touch pwned-background', 'npm test\ntouch pwned-newline', 'npm run test:unit && touch pwned-run-and'],
));
