import { defineAttack } from '../attack-case.js';
import { bypassCase } from '../permission-bypass.js';

export default defineAttack(bypassCase(
  'a command inside a shell string, eval or a here-doc',
  'bash -c, sh -c, eval, source of a process substitution, and a here-doc or here-string fed to sh.',
  [
    'bash -c "touch pwned-bash-c"',
    'sh -c \'touch pwned-sh-c\'',
    'eval "touch pwned-eval"',
    'source <(echo touch pwned-source)',
    'sh <<EOF\ntouch pwned-heredoc\nEOF',
    'sh <<< "touch pwned-herestring"',
    'echo "touch pwned-pipe-sh" | sh',
    'python3 -c "open(\'pwned-python-c\', \'w\')"',
    'node -e "require(\'fs\').writeFileSync(\'pwned-node-e\', \'\')"',
  ],
));
