import { spawn, type ChildProcess } from 'node:child_process';

/**
 * A Python program that swaps two entries of a folder (a real folder and a link to elsewhere)
 * in a tight loop with renameat2(RENAME_EXCHANGE), so at every instant one of the two names is a
 * folder and the other the link: the fastest way an agent's background process can race a
 * runtime that checks a path and opens it again. Arguments: the two paths.
 */
export const folderSwapperSource = String.raw`
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
first, second = sys.argv[1].encode(), sys.argv[2].encode()
AT_FDCWD, RENAME_EXCHANGE = -100, 2
if libc.renameat2(AT_FDCWD, first, AT_FDCWD, second, RENAME_EXCHANGE) != 0:
    sys.exit('renameat2 failed: %d' % ctypes.get_errno())
print('swapping', flush=True)
while True:
    libc.renameat2(AT_FDCWD, first, AT_FDCWD, second, RENAME_EXCHANGE)
`;

export interface FolderSwapper {
  stop(): Promise<void>;
}

/** Starts swapping `first` and `second`; resolves once the first swap succeeded. */
export async function startFolderSwapper(python: string, first: string, second: string): Promise<FolderSwapper> {
  const child: ChildProcess = spawn(python, ['-c', folderSwapperSource, first, second], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let errors = '';
    child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    child.stdout?.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the swapper ended (${code}): ${errors}`)));
  });
  return {
    async stop() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
