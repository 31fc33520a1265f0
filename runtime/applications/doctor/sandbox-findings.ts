/**
 * The sandboxes code can run in: whether bubblewrap really works here (a command is run in fresh
 * namespaces, as a run would), and whether a Docker daemon answers and has the image. What is
 * needed follows the agent's sandbox: `auto` needs one of the two, `bwrap` or `docker` that one,
 * `host` neither; one that is not needed is only a warning when it does not work.
 */
import type { SandboxSettings } from '../../contract/tool.js';
import { probeBwrap } from '../../services/sandbox/create-sandbox.js';
import { probeDocker } from '../../services/sandbox/docker-connection.js';
import type { DoctorFinding } from '../../contract/doctor-finding.js';

export async function sandboxFindings(kind: SandboxSettings['kind'], image: string, environment: NodeJS.ProcessEnv): Promise<DoctorFinding[]> {
  const [bwrap, docker] = await Promise.all([probeBwrap(), probeDocker(image, environment)]);
  const oneWorks = bwrap.usable || docker.available;
  const bwrapNeeded = kind === 'bwrap' || (kind === 'auto' && !oneWorks);
  const dockerNeeded = kind === 'docker' || (kind === 'auto' && !oneWorks);
  const bubblewrap: DoctorFinding = bwrap.usable
    ? { check: 'bubblewrap', status: 'ok', detail: 'a command runs in fresh namespaces without network' }
    : { check: 'bubblewrap', status: bwrapNeeded ? 'missing' : 'warning', detail: bwrap.reason, fix: bwrap.fix };
  const where = environment.MANUS_DOCKER_HOST ?? environment.DOCKER_HOST ?? 'the default socket';
  const dockerFinding: DoctorFinding = docker.available
    ? { check: 'docker', status: 'ok', detail: `the daemon at ${where} answers and has the image ${image}` }
    : {
        check: 'docker',
        status: dockerNeeded ? 'missing' : 'warning',
        detail: docker.reason,
        fix: 'start a daemon and build the image with sudo sh .ci/setup-docker.sh, then set DOCKER_HOST (or MANUS_DOCKER_HOST) to the socket it prints' +
          (kind === 'auto' && bwrap.usable ? '; not needed while bubblewrap works' : ''),
      };
  if (kind === 'auto' && !oneWorks) {
    bubblewrap.fix = `${bubblewrap.fix}; or use Docker (below); without either, code runs only on the host with --sandbox host`;
  }
  return [bubblewrap, dockerFinding];
}
