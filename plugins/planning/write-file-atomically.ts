/** Replaces a file whole: a reader, or a crash, never sees half of it. */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Writes a temporary file beside the target and renames it over the target. */
export async function writeFileAtomically(path: string, text: string): Promise<void> {
  const temporaryPath = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await mkdir(dirname(path), { recursive: true });
  try {
    await writeFile(temporaryPath, text);
    await rename(temporaryPath, path);
  } catch (error) {
    await rm(temporaryPath, { force: true });
    throw error;
  }
}
