/**
 * Finds the Docker daemon and loads dockerode only when a docker sandbox is wanted, so runs
 * without Docker never load it. MANUS_DOCKER_HOST names the runtime's daemon without changing
 * the user's docker CLI; otherwise DOCKER_HOST (with its TLS variables) or the default socket.
 */
import type Dockerode from 'dockerode';
import { SandboxError } from './sandbox-errors.js';

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
  const { default: Docker } = await import('dockerode');
  const host = environment.MANUS_DOCKER_HOST;
  const timeout = requestTimeoutMs === undefined ? {} : { timeout: requestTimeoutMs };
  return new Docker(host ? { ...parseDockerHost(host), ...timeout } : timeout);
}

export function parseDockerHost(host: string): Dockerode.DockerOptions {
  if (host.startsWith('unix://')) return { socketPath: host.slice('unix://'.length) };
  const tcp = /^tcp:\/\/([^:/]+):(\d+)\/?$/.exec(host);
  if (tcp) return { host: tcp[1], port: Number(tcp[2]), protocol: 'http' };
  throw new SandboxError('sandbox_options_invalid', `MANUS_DOCKER_HOST "${host}" must be unix:///path or tcp://host:port.`);
}

/** Whether a daemon answers and has `image`; the reason names what to do when not. */
export async function probeDocker(image: string, environment: NodeJS.ProcessEnv = process.env): Promise<DockerAvailability> {
  let docker: Dockerode;
  try {
    docker = await connectDocker(environment, probeTimeoutMs);
  } catch (error) {
    return { available: false, reason: (error as Error).message };
  }
  const where = environment.MANUS_DOCKER_HOST ?? environment.DOCKER_HOST ?? 'the default socket';
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
      reason: `the Docker daemon at ${where} has no image ${image} (.ci/setup-docker.sh builds one)`,
    };
  }
  return { available: true };
}
