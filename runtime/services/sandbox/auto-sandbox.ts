/**
 * The `auto` sandbox: bubblewrap when it works here, else Docker when a daemon answers and has
 * the image, else the host, but only with the user's consent. Code a model wrote never runs on
 * the host merely because nothing better was installed: without `--trust host` (or
 * `--sandbox host`) and with no one at a terminal to ask, the run stops with the fix.
 */
import type { TrustGrant } from '../../contract/trust-grants.js';
import { PermissionDeniedError } from '../../contract/errors.js';
import { isYes } from '../human-channel.js';
import type { SandboxSettings } from '../../contract/tool.js';
import { probeBwrap } from './create-sandbox.js';
import { probeDocker } from './docker-connection.js';
import { readSandboxOptions } from './sandbox-options.js';

export interface HostConsent {
  /** What the user consented to beforehand: `--trust` and their own configuration. */
  trustGrants: ReadonlySet<TrustGrant>;
  /** Asks the person at the terminal; absent when no one can be asked (CI, no terminal). */
  ask?: (question: string) => Promise<string>;
}

export interface SandboxChoice {
  /** Settings with a concrete kind. */
  settings: SandboxSettings;
  /** Why this kind, in one sentence. */
  reason: string;
}

export async function chooseAutoSandbox(requested: SandboxSettings, consent: HostConsent): Promise<SandboxChoice> {
  const bwrap = await probeBwrap();
  if (bwrap.usable) return { settings: { ...requested, kind: 'bwrap' }, reason: 'bubblewrap works here' };
  const image = readSandboxOptions(requested.options).image;
  const docker = await probeDocker(image);
  const unavailable = `bubblewrap is not usable here (${bwrap.reason})`;
  if (docker.available) {
    return { settings: { ...requested, kind: 'docker' }, reason: `${unavailable}; a Docker daemon answers and has the image ${image}` };
  }
  const host = { ...requested, kind: 'host' as const };
  if (consent.trustGrants.has('host')) {
    return { settings: host, reason: `${unavailable} and ${docker.reason}; the user allowed code on the host (--trust host)` };
  }
  const fix =
    `To run code, ${bwrap.fix}; or start Docker with the image ${image} (--sandbox docker), ` +
    'or pass --sandbox host (or --trust host) to run code on the host without isolation.';
  if (!consent.ask) {
    throw new PermissionDeniedError(
      `no sandbox is usable: ${unavailable} and ${docker.reason}. Code does not run on the host without your consent, and no one can be asked here. ${fix}`,
    );
  }
  const answer = await consent.ask(`${unavailable} and ${docker.reason}; run code on the host without isolation? [y/N]`);
  if (isYes(answer)) {
    return { settings: host, reason: `${unavailable} and ${docker.reason}; the user agreed at the terminal to run code on the host` };
  }
  throw new PermissionDeniedError(`code was not run: you declined to run it on the host without isolation. ${fix}`);
}
