import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeFixture, repositoryRoot } from './support/run-cli.js';

const mirrorScript = join(repositoryRoot, '.ci', 'debian-mirror.sh');
const defaultMirror = 'http://deb.debian.org/debian';
const hostArchitecture = spawnSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).stdout?.trim() ?? '';

/** Runs the real script with /bin/sh (dash on Debian, so POSIX only) against an apt configuration folder. */
function mirrorFor(aptFiles: Record<string, string>, environment: Record<string, string> = {}): string {
  const aptRoot = makeFixture({ '.keep': '', ...aptFiles });
  const result = spawnSync('/bin/sh', [mirrorScript, aptRoot], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...environment } });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout.trim();
}

describe('the Debian mirror for the sandbox base image', () => {
  it('takes the first Debian entry of a one-line sources.list, past comments, security, updates, deb-src, cdrom and options', () => {
    const sourcesList = [
      '# deb http://commented.example/debian bookworm main',
      'deb cdrom:[Debian GNU/Linux 12.5.0 _Bookworm_ - Official amd64 DVD]/ bookworm contrib main',
      'deb http://security.debian.org/debian-security bookworm-security main',
      'deb http://updates.example/debian bookworm-updates main',
      'deb-src http://source.example/debian bookworm main',
      'deb https://packages.example/apt cloud-sdk-bookworm main',
      `deb [ arch=${hostArchitecture || 'amd64'},i386 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg ] http://mirror.example/debian/ bookworm main contrib`,
      'deb http://later.example/debian bookworm main',
      '',
    ].join('\n');
    expect(mirrorFor({ 'sources.list': sourcesList })).toBe('http://mirror.example/debian');
  });

  it('skips one-line entries limited to another architecture', () => {
    const sourcesList = ['deb [arch=not-this-architecture] http://other-arch.example/debian bookworm main', 'deb http://mirror.example/debian trixie main', ''].join('\n');
    expect(mirrorFor({ 'sources.list': sourcesList })).toBe('http://mirror.example/debian');
  });

  it('reads deb822 .sources stanzas: Types, URIs, Suites, Enabled, continuation lines and comments', () => {
    const sources = [
      'Types: deb',
      'URIs: http://deb.example/debian-security',
      'Suites: bookworm-security',
      'Components: main',
      '',
      'Enabled: no',
      'Types: deb',
      'URIs: http://disabled.example/debian',
      'Suites: bookworm',
      '',
      'Types: deb-src',
      'URIs: http://source.example/debian',
      'Suites: bookworm',
      '',
      'Types: deb',
      'Architectures: not-this-architecture',
      'URIs: http://other-arch.example/debian',
      'Suites: bookworm',
      '',
      '# The mirror this machine installs from.',
      'Types: deb-src deb',
      '# http://snapshot.example/archive/debian/20250520T000000Z',
      'URIs: http://mirror.example/debian http://second.example/debian',
      'Suites: bookworm-updates',
      ' bookworm',
      'Components: main',
      'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg',
    ].join('\n');
    expect(mirrorFor({ 'sources.list.d/debian.sources': sources })).toBe('http://mirror.example/debian');
  });

  it('reads sources.list first, then sources.list.d in name order, ignoring files apt ignores', () => {
    const entry = (host: string) => `deb http://${host}/debian bookworm main\n`;
    expect(mirrorFor({
      'sources.list.d/a-disabled.list.disabled-by-admin': entry('ignored.example'),
      'sources.list.d/b-nodesource.sources': 'Types: deb\nURIs: https://deb.nodesource.example/node_20.x\nSuites: nodistro\n',
      'sources.list.d/c-debian.sources': 'Types: deb\nURIs: http://from-sources.example/debian\nSuites: bookworm\n',
      'sources.list.d/d-debian.list': entry('from-list.example'),
    })).toBe('http://from-sources.example/debian');
    expect(mirrorFor({ 'sources.list': entry('main-file.example'), 'sources.list.d/a.list': entry('directory.example') })).toBe('http://main-file.example/debian');
  });

  it('falls back to deb.debian.org without a Debian entry, and MANUS_DEBIAN_MIRROR overrides everything', () => {
    expect(mirrorFor({})).toBe(defaultMirror);
    expect(mirrorFor({ 'sources.list': 'deb http://archive.ubuntu.example/ubuntu jammy main\n' })).toBe(defaultMirror);
    const sourcesList = 'deb http://mirror.example/debian bookworm main\n';
    expect(mirrorFor({ 'sources.list': sourcesList }, { MANUS_DEBIAN_MIRROR: 'http://override.example/debian' })).toBe('http://override.example/debian');
  });

  it('is what setup-docker.sh gives debootstrap', () => {
    const setup = readFileSync(join(repositoryRoot, '.ci', 'setup-docker.sh'), 'utf8');
    expect(setup).toContain('mirror="$(sh "$(dirname "$0")/debian-mirror.sh")"');
    expect(setup).not.toMatch(/^\s*mirror=.*deb\.debian\.org/m);
    expect(spawnSync('/bin/sh', ['-n', join(repositoryRoot, '.ci', 'setup-docker.sh')]).status).toBe(0);
  });
});
