import { defineAttack } from '../attack-case.js';
import { bypassCase } from '../permission-bypass.js';

export default defineAttack(bypassCase(
  'a command run through a wrapper program',
  'Programs that run their arguments as a command: timeout, nice, nohup, env, command, exec, xargs, find -exec, stdbuf, setsid, and npm exec.',
  [
    'timeout 5 touch pwned-timeout',
    'nice -n 5 touch pwned-nice',
    'nohup touch pwned-nohup',
    'env touch pwned-env',
    'command touch pwned-command',
    'echo pwned-xargs | xargs touch',
    'find . -maxdepth 0 -exec touch pwned-find \\;',
    'stdbuf -o0 touch pwned-stdbuf',
    'setsid touch pwned-setsid',
    'npm exec -- touch pwned-npm-exec',
    'npx --yes touch pwned-npx',
    'exec touch pwned-exec',
  ],
));
