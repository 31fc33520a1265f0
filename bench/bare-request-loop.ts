/**
 * The floor the loop benchmarks measure against: a Node process sending the same request bodies in
 * a plain loop with the global fetch, each once the last reply has been read. The bodies are
 * written to a file in `folder`; the returned script, run with `node -e`, reads them.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function bareRequestLoop(folder: string, baseUrl: string, bodies: unknown[]): string {
  const bodiesFile = join(folder, 'bodies.json');
  writeFileSync(bodiesFile, JSON.stringify(bodies));
  return [
    "const { readFileSync } = require('node:fs');",
    `const bodies = JSON.parse(readFileSync(${JSON.stringify(bodiesFile)}, 'utf8'));`,
    '(async () => {',
    '  for (const body of bodies) {',
    `    const response = await fetch(${JSON.stringify(`${baseUrl}/chat/completions`)}, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer bench' }, body: JSON.stringify(body) });`,
    '    await response.text();',
    '  }',
    '})();',
  ].join('\n');
}
