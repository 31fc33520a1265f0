/**
 * Finds the Docker daemon and loads dockerode only when a docker sandbox is wanted, so runs
 * without Docker never load it. MANUS_DOCKER_HOST names the runtime's daemon without changing
 * the user's docker CLI; otherwise DOCKER_HOST (with its TLS variables) or the default socket,
 * as docker-daemon-address.ts reads them.
 */
import type Dockerode from 'dockerode';
import { readDockerDaemonAddress, type DockerDaemonAddress } from './docker-daemon-address.js';

export type DockerAvailability = { available: true } | { available: false; reason: string };

/** A short deadline for the availability check: a missing daemon should not hold up a run. */
const probeTimeoutMs = 3000;

/**
 * `requestTimeoutMs` bounds every request of the returned client, idle exec streams included, so
 * it suits short checks only.
 */
export async function connectDocker(
  environment: NodeJS.ProcessEnv = process.env,
  requestTimeoutMs?: number,
): Promise<Dockerode> {
  const { options } = readDockerDaemonAddress(environment);
  const { default: Docker } = await import('dockerode');
  const timeout = requestTimeoutMs === undefined ? {} : { timeout: requestTimeoutMs };
  return new Docker({ ...options, ...timeout });
}

/** Whether a daemon answers and has `image`; the reason names what to do when not. */
export async function probeDocker(image: string, environment: NodeJS.ProcessEnv = process.env): Promise<DockerAvailability> {
  let docker: Dockerode;
  try {
    docker = await connectDocker(environment, probeTimeoutMs);
  } catch (error) {
    return { available: false, reason: (error as Error).message };
  }
  const daemon = readDockerDaemonAddress(environment);
  const where = daemon.address;
  try {
    await docker.ping();
  } catch (error) {
    return { available: false, reason: `no Docker daemon answers at ${where} (${(error as Error).message})` };
  }
  try {
    await docker.getImage(image).inspect();
  } catch {
    return {
      available: false,
      reason: `the Docker daemon at ${where} has no image ${image} (${missingImageFix(image, daemon)})`,
    };
  }
  return { available: true };
}

/** The command that puts the image where the daemon is: built here, or copied from this machine to a remote one. */
export function missingImageFix(image: string, daemon: DockerDaemonAddress): string {
  if (daemon.workspace === 'mount') return '.ci/setup-docker.sh builds one, or set sandbox.image';
  return `build it on this machine with .ci/setup-docker.sh, then copy it there: docker save ${image} | DOCKER_HOST=${daemon.address} docker load`;
}
