import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import bash from '../../plugins/code/bash.js';
import { probeBwrap } from '../../runtime/services/sandbox/create-sandbox.js';
import type { ToolResult } from '../../runtime/contract/tool.js';
import { folderSwapperSource } from '../support/folder-swapper.js';
import { createTestToolContext, type TestToolContext } from '../support/tool-context.js';

const availability = await probeBwrap();
const runningAsRoot = process.getuid?.() === 0;
const skipReason = !availability.usable
  ? `bwrap is not usable: ${availability.reason}`
  : !runningAsRoot
    ? 'commands run as another user than the runtime only when the runtime is root'
    : '';
if (skipReason) console.warn(`sandbox-between-commands attacks skipped: ${skipReason}`);

describe.skipIf(skipReason !== '')('what the sandbox user can do between commands', () => {
  let test: TestToolContext | undefined;
  let outside: string | undefined;

  afterEach(async () => {
    await test?.dispose();
    if (test) rmSync(test.root, { recursive: true, force: true });
    if (outside) rmSync(outside, { recursive: true, force: true });
    test = undefined;
    outside = undefined;
  });

  async function run(command: string): Promise<ToolResult> {
    return (await bash.execute({ command }, test!.context)) as ToolResult;
  }

  it('a background process cannot rename in a folder the agent made world-writable', async () => {
    test = createTestToolContext({ sandboxSettings: async () => ({ kind: 'bwrap', network: false, options: {} }) });
    const { workspace } = test.context;
    // The loop waits for the command to end, then tries to rename and create while none runs.
    const result = await run(
      'mkdir -m 777 open && touch open/a && chmod 666 open/a; ' +
        '(sleep 1; for i in 1 2 3 4 5 6 7 8 9 10; do mv open/a open/moved-$i; touch open/new-$i; echo x >> open/a; sleep 0.2; done) >/dev/null 2>&1 &',
    );
    expect(result.content).toContain('[Exit status 0]');
    await delay(4000);
    expect(readdirSync(join(workspace, 'open'))).toEqual(['a']);
    expect(statSync(join(workspace, 'open', 'a')).size).toBe(0);
    expect(statSync(join(workspace, 'open')).mode & 0o022).toBe(0);
  });

  it('a folder swapped for a link while ownership is handed over and back never carries it outside', async () => {
    test = createTestToolContext({ sandboxSettings: async () => ({ kind: 'bwrap', network: false, options: {} }) });
    const { workspace } = test.context;
    outside = realpathSync(mkdtempSync(join(tmpdir(), 'manus-outside-')));
    const target = join(outside, 'owned-by-root');
    mkdirSync(target, { mode: 0o700 });
    const names = Array.from({ length: 200 }, (_, index) => `shadow-${index}`);
    for (const name of names) writeFileSync(join(target, name), 'root only\n', { mode: 0o600 });
    writeFileSync(join(workspace, 'swapper.py'), folderSwapperSource);
    // sub/d holds files of the same names; the swapper exchanges sub/d with a link to the root-only folder.
    await run(
      `mkdir -p sub/d && (cd sub/d && touch ${names.join(' ')}) && ln -s ${target} sub/link && ` +
        '(python3 swapper.py sub/d sub/link >/dev/null 2>&1 &) ; sleep 0.2',
    );
    for (let command = 0; command < 10; command += 1) await run('sleep 0.1');
    for (const name of names) {
      const information = lstatSync(join(target, name));
      expect({ name, uid: information.uid, gid: information.gid, mode: information.mode & 0o7777 }).toEqual({ name, uid: 0, gid: 0, mode: 0o600 });
    }
    expect(lstatSync(target).uid).toBe(0);
    expect(existsSync(join(target, 'd'))).toBe(false);
  });
});
