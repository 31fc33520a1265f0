/** `manus pack init <name>`: a new pack that passes its own test and `manus validate`. */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from '../runtime/contract/errors.js';
import { isPackageName } from '../runtime/features/packs/installed-packs.js';
import { shownPath } from '../runtime/kernel/plugin-loading/plugin-scan.js';
import { ExitCode } from './exit-codes.js';
import { packScaffold } from './pack-scaffold.js';

export function packInitCommand(name: string, options: { dir?: string }, runtimeVersion: string): number {
  if (!isPackageName(name)) {
    throw new UsageError(`'${name}' is not an npm package name: lower case letters, digits, '-', '.' and '_', optionally scoped as @scope/name`);
  }
  const cwd = process.cwd();
  const folder = resolve(cwd, options.dir ?? name.split('/').pop()!);
  if (existsSync(folder) && readdirSync(folder).length > 0) {
    throw new UsageError(`${folder} already exists and is not empty; choose another folder with --dir`);
  }
  const files = packScaffold(name, runtimeVersion);
  for (const [path, content] of Object.entries(files)) {
    const target = join(folder, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
  const shown = shownPath(folder, cwd);
  process.stderr.write(
    `made the pack ${name} in ${shown}:\n${Object.keys(files).map((path) => `  ${path}`).join('\n')}\n` +
      `next: manus validate ${shown}; manus run ${shown}/recipes/hello.yaml --param name=Ada;\n` +
      `  cd ${shown} && npm install --save-dev <the manus-runtime tarball or git URL> && npm test\n`,
  );
  return ExitCode.success;
}
