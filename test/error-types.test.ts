import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ConfigError,
  HumanInputNeededError,
  ManusError,
  PermissionDeniedError,
  ProviderError,
  ToolError,
} from '../runtime/contract/errors.js';
import { SandboxError } from '../runtime/services/sandbox/sandbox-errors.js';
import { WorkspacePathError } from '../runtime/services/workspace-paths.js';
import { readEvents, repositoryRoot } from './support/run-cli.js';
import { runScripted, writeLoopFixture } from './support/loop-fixture.js';

const copies = mkdtempSync(join(tmpdir(), 'manus-errors-copy-'));
afterAll(() => rmSync(copies, { recursive: true, force: true }));

/** A second copy of the errors module, as a plugin that bundles its own copy of the runtime has. */
async function importCopyOfErrors(): Promise<typeof import('../runtime/contract/errors.js')> {
  const copy = join(copies, 'errors.ts');
  copyFileSync(join(repositoryRoot, 'runtime', 'contract', 'errors.ts'), copy);
  return import(pathToFileURL(copy).href);
}

describe('recognising errors', () => {
  it('recognises an error made by another copy of the errors module, where instanceof does not', async () => {
    const copy = await importCopyOfErrors();
    expect(copy.PermissionDeniedError).not.toBe(PermissionDeniedError);
    const denied = new copy.PermissionDeniedError('not allowed');
    expect(denied instanceof PermissionDeniedError).toBe(false);
    expect(PermissionDeniedError.isInstance(denied)).toBe(true);
    expect(ManusError.isInstance(denied)).toBe(true);
    expect(ToolError.isInstance(denied)).toBe(false);
    if (ManusError.isInstance(denied)) expect(denied.code).toBe('permission_denied');
    const asked = new HumanInputNeededError('Which city?');
    expect(copy.HumanInputNeededError.isInstance(asked)).toBe(true);
    expect(copy.PermissionDeniedError.isInstance(asked)).toBe(false);
  });

  it('takes a subclass for an instance of its parents, never of its siblings', () => {
    const sandbox = new SandboxError('sandbox_failed', 'the container did not start');
    expect(SandboxError.isInstance(sandbox)).toBe(true);
    expect(ToolError.isInstance(sandbox)).toBe(true);
    expect(ManusError.isInstance(sandbox)).toBe(true);
    expect(WorkspacePathError.isInstance(sandbox)).toBe(false);
    expect(PermissionDeniedError.isInstance(sandbox)).toBe(false);
    expect(ProviderError.isInstance(new ProviderError('rate_limited', 'slow down'))).toBe(true);
    expect(ConfigError.isInstance(new ConfigError([]))).toBe(true);
  });

  it('does not go by a code alone: look-alike objects and plain errors are not the runtime\'s', () => {
    const lookAlike = Object.assign(new Error('denied'), { code: 'permission_denied', exitCode: 5 });
    for (const value of [lookAlike, { code: 'needs_input' }, new Error('plain'), 'permission_denied', null, undefined]) {
      expect(ManusError.isInstance(value)).toBe(false);
      expect(PermissionDeniedError.isInstance(value)).toBe(false);
      expect(HumanInputNeededError.isInstance(value)).toBe(false);
    }
  });

  it('ends a run as permission-denied with exit 5 when a plugin denies with its own copy of the errors module', async () => {
    const fixture = writeLoopFixture({ tools: ['guarded', 'terminate'] });
    mkdirSync(join(fixture, 'vendor'));
    copyFileSync(join(repositoryRoot, 'runtime', 'contract', 'errors.ts'), join(fixture, 'vendor', 'errors.ts'));
    writeFileSync(join(fixture, 'tools', 'guarded.ts'), `import { defineTool } from 'manus-runtime';
import { PermissionDeniedError } from '../vendor/errors.ts';

export default defineTool({
  name: 'guarded',
  description: 'Refuses every call.',
  parameters: { type: 'object', properties: {} },
  execute() {
    throw new PermissionDeniedError('the guarded tool refuses');
  },
});
`);
    const run = await runScripted([{ toolCalls: [{ name: 'guarded', arguments: {} }] }], { fixture });
    expect(run.exitCode, run.stderr).toBe(5);
    expect(run.json).toMatchObject({ status: 'permission-denied', exitCode: 5, error: { code: 'permission_denied', message: 'the guarded tool refuses' } });
    expect(readEvents(run.json.runDirectory).at(-1)).toMatchObject({ type: 'run-end', status: 'permission-denied', exitCode: 5 });
  });
});
