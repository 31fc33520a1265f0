/**
 * Where the runtime's Docker daemon is and how to reach it, read from the environment the way the
 * docker CLI reads it: MANUS_DOCKER_HOST (the runtime's own choice) or DOCKER_HOST, with
 * DOCKER_TLS_VERIFY and DOCKER_CERT_PATH for `tcp://`, and the ssh agent for `ssh://`.
 *
 * A daemon reached through a unix socket or a named pipe is taken to share this machine's files,
 * so the workspace is bind-mounted; any other address is remote, and the workspace is copied in and
 * out (docker-workspace-sync.ts). MANUS_DOCKER_WORKSPACE=copy|mount overrides that guess: `copy`
 * for a socket forwarded from another machine, `mount` for a TCP daemon on this one.
 *
 * A daemon's API is root on its machine, so a `tcp://` address beyond loopback is refused without
 * TLS verification: an unencrypted one would hand that to anyone on the network path.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type Dockerode from 'dockerode';
import { SandboxError } from './sandbox-errors.js';

export type DockerWorkspaceMode = 'mount' | 'copy';

export interface DockerDaemonAddress {
  /** The address as the user gave it, for messages; "the default socket" when none was. */
  address: string;
  /** Whether the workspace is bind-mounted or copied in and out. */
  workspace: DockerWorkspaceMode;
  /** Connection options for dockerode, every TLS and ssh field stated so none is taken from elsewhere. */
  options: Dockerode.DockerOptions;
}

const defaultSocket = '/var/run/docker.sock';
const tlsPort = '2376';

export function readDockerDaemonAddress(environment: NodeJS.ProcessEnv = process.env): DockerDaemonAddress {
  const given = environment.MANUS_DOCKER_HOST || environment.DOCKER_HOST;
  const variable = environment.MANUS_DOCKER_HOST ? 'MANUS_DOCKER_HOST' : 'DOCKER_HOST';
  const { options, remote } = given ? connectionOptions(given, variable, environment) : { options: socketOptions(defaultSocket), remote: false };
  return { address: given || 'the default socket', workspace: workspaceMode(environment, remote), options };
}

function connectionOptions(given: string, variable: string, environment: NodeJS.ProcessEnv): { options: Dockerode.DockerOptions; remote: boolean } {
  if (given.startsWith('unix://')) return { options: socketOptions(given.slice('unix://'.length) || defaultSocket), remote: false };
  if (given.startsWith('npipe://')) return { options: socketOptions(given.slice('npipe://'.length) || '//./pipe/docker_engine'), remote: false };
  let url: URL;
  try {
    url = new URL(given.includes('://') ? given : `tcp://${given}`);
  } catch {
    throw addressError(variable, given);
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (url.protocol === 'ssh:') {
    return {
      remote: true,
      options: {
        ...noTls,
        protocol: 'ssh',
        host,
        port: url.port || '22',
        username: decodeURIComponent(url.username) || undefined,
        sshOptions: { agent: environment.SSH_AUTH_SOCK },
      },
    };
  }
  if (url.protocol !== 'tcp:' || host === '' || url.port === '') throw addressError(variable, given);
  if (environment.DOCKER_TLS_VERIFY || url.port === tlsPort) {
    return { remote: true, options: { protocol: 'https', host, port: url.port, ...clientCertificates(environment) } };
  }
  if (!isLoopback(host)) {
    throw new SandboxError(
      'sandbox_options_invalid',
      `${variable} ${given} is a Docker daemon reached without TLS; set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH to its client certificates (or reach it through ssh://).`,
    );
  }
  return { remote: true, options: { ...noTls, protocol: 'http', host, port: url.port } };
}

/** The client certificate, key and CA from DOCKER_CERT_PATH, or the docker CLI's own folder. */
function clientCertificates(environment: NodeJS.ProcessEnv): Pick<Dockerode.DockerOptions, 'ca' | 'cert' | 'key'> {
  const folder = environment.DOCKER_CERT_PATH || join(environment.DOCKER_CONFIG || join(homedir(), '.docker'));
  const read = (name: string) => {
    try {
      return readFileSync(join(folder, name));
    } catch (error) {
      throw new SandboxError(
        'sandbox_options_invalid',
        `DOCKER_TLS_VERIFY is set but ${join(folder, name)} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); DOCKER_CERT_PATH must name the folder holding ca.pem, cert.pem and key.pem.`,
      );
    }
  };
  return { ca: read('ca.pem'), cert: read('cert.pem'), key: read('key.pem') };
}

function socketOptions(socketPath: string): Dockerode.DockerOptions {
  return { ...noTls, socketPath, host: undefined, port: undefined, protocol: undefined };
}

/** dockerode fills absent fields from process.env's DOCKER_* variables: stating them keeps those out. */
const noTls = { ca: undefined, cert: undefined, key: undefined } as const;

function workspaceMode(environment: NodeJS.ProcessEnv, remote: boolean): DockerWorkspaceMode {
  const chosen = environment.MANUS_DOCKER_WORKSPACE;
  if (chosen === undefined || chosen === '') return remote ? 'copy' : 'mount';
  if (chosen === 'copy' || chosen === 'mount') return chosen;
  throw new SandboxError('sandbox_options_invalid', `MANUS_DOCKER_WORKSPACE must be "copy" or "mount", not "${chosen}".`);
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function addressError(variable: string, given: string): SandboxError {
  return new SandboxError('sandbox_options_invalid', `${variable} "${given}" must be unix:///path, tcp://host:port or ssh://[user@]host[:port].`);
}
