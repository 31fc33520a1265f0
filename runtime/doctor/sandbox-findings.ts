/**
 * The sandboxes code can run in: whether bubblewrap really works here (a command is run in fresh
 * namespaces, as a run would), and whether a Docker daemon answers and has the image. One of the
 * two is needed; the other is then only a warning.
 */
import { probeBwrap } from '../sandbox/create-sandbox.js';
import { probeDocker } from '../sandbox/docker-connection.js';
import type { DoctorFinding } from './doctor-finding.js';

export async function sandboxFindings(image: string, environment: NodeJS.ProcessEnv): Promise<DoctorFinding[]> {
  const [bwrap, docker] = await Promise.all([probeBwrap(), probeDocker(image, environment)]);
  const oneWorks = bwrap.usable || docker.available;
  const absentStatus = oneWorks ? 'warning' : 'missing';
  const bubblewrap: DoctorFinding = bwrap.usable
    ? { check: 'bubblewrap', status: 'ok', detail: 'a command runs in fresh namespaces without network' }
    : { check: 'bubblewrap', status: absentStatus, detail: bwrap.reason, fix: bwrap.fix };
  const where = environment.MANUS_DOCKER_HOST ?? environment.DOCKER_HOST ?? 'the default socket';
  const dockerFinding: DoctorFinding = docker.available
    ? { check: 'docker', status: 'ok', detail: `the daemon at ${where} answers and has the image ${image}` }
    : {
        check: 'docker',
        status: absentStatus,
        detail: docker.reason,
        fix: `start a daemon and build the image with sudo sh .ci/setup-docker.sh, then set DOCKER_HOST (or MANUS_DOCKER_HOST) to the socket it prints${oneWorks ? '; not needed while bubblewrap works' : ''}`,
      };
  if (!oneWorks) {
    bubblewrap.fix = `${bubblewrap.fix}; or use Docker (below); without either, code runs only on the host with --sandbox host`;
  }
  return [bubblewrap, dockerFinding];
}
