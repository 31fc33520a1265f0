import { defineAttack } from '../attack-case.js';
import { bypassCase } from '../permission-bypass.js';

export default defineAttack(bypassCase(
  'a command name disguised from the rules',
  'Absolute paths, quoting, escapes, variables, globs, brace expansion, ANSI-C quoting, an alias and a function named like an allowed command.',
  [
    '/usr/bin/touch pwned-absolute',
    '/bin/touch pwned-bin',
    '"touch" pwned-quoted-name',
    't\\ouch pwned-escaped',
    'T=touch; $T pwned-variable',
    '/usr/bin/tou?h pwned-glob',
    '{touch,pwned-brace}',
    "$'\\x74ouch' pwned-ansi-c",
    'npm() { touch pwned-function; }; npm test',
    'shopt -s expand_aliases; alias npm="touch pwned-alias"; npm test',
    'PATH=.:$PATH npm test',
  ],
));
