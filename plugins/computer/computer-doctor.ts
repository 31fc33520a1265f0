/**
 * The computer tool's part of `manus doctor`: whether the desktop's programs are there in the
 * sandbox the runs would use (under bubblewrap and on the host they are this machine's; the
 * Docker image brings its own), with the Debian packages to install when they are not.
 */
import type { DoctorContext, DoctorFinding, Sandbox } from 'manus-runtime';
import { desktopPrograms } from './desktop-script.js';

const placeNames: Record<Sandbox['kind'], string> = { bwrap: 'in bubblewrap', docker: 'in the Docker sandbox', host: 'on the host' };

export async function checkDesktop(_settings: Record<string, unknown>, context: DoctorContext): Promise<DoctorFinding[]> {
  const sandbox = await context.sandbox();
  const place = placeNames[sandbox.kind];
  const script = desktopPrograms.map(({ program }) => `command -v ${program} >/dev/null 2>&1 || echo ${program}`).join('\n');
  let missingNames: string[];
  try {
    const result = await sandbox.run(['sh', '-c', script], { timeoutMs: 10_000, signal: context.signal });
    if (result.exitCode !== 0) throw new Error(`sh exited with status ${result.exitCode}: ${result.stderr.toString('utf8').trim()}`);
    missingNames = result.stdout.toString('utf8').split('\n').filter(Boolean);
  } catch (error) {
    return [{ check: 'desktop', status: 'missing', detail: `the programs could not be looked for ${place}: ${(error as Error).message.split('\n')[0]}`, fix: 'run `manus doctor` again once the sandbox works' }];
  }
  const missing = desktopPrograms.filter(({ program }) => missingNames.includes(program));
  if (missing.length === 0) {
    return [{ check: 'desktop', status: 'ok', detail: `Xvfb, a window manager, xdotool and ImageMagick are there ${place}` }];
  }
  const packages = [...new Set(missing.map(({ debian }) => debian))];
  const fix = sandbox.kind === 'docker'
    ? `the Docker image lacks them: build the image from runtime/config/sandbox-image-packages.txt (.ci/setup-docker.sh), or add ${packages.join(' ')} to your own image`
    : `apt-get install ${packages.join(' ')} (and xterm, or the programs tool_settings.computer.programs starts)`;
  return [{
    check: 'desktop',
    status: 'missing',
    detail: `the computer tool's desktop needs ${missing.map(({ program, purpose }) => `${program} (${purpose})`).join(', ')}, not found ${place}`,
    fix,
  }];
}
