/**
 * A command of four processes that each take `eachMb` of memory (written, so it is resident)
 * and hold it for a few seconds, then print how many of them held it to the end. Under a limit
 * for the whole command below twice `eachMb`, at most one can; under a limit per process, all four.
 */
export function memoryHogsCommand(eachMb: number): string[] {
  const child = `import time; hold = b"\\x01" * (${eachMb} * 1024 * 1024); time.sleep(3)`;
  return ['python3', '-c', [
    'import subprocess, sys',
    `children = [subprocess.Popen([sys.executable, "-c", ${JSON.stringify(child)}]) for _ in range(4)]`,
    'print("held", sum(1 for child in children if child.wait() == 0), flush=True)',
  ].join('\n')];
}

/** How many processes held their memory to the end; 0 when the command itself was killed first. */
export function processesThatHeld(stdout: string): number {
  return Number(/held (\d+)/.exec(stdout)?.[1] ?? 0);
}
