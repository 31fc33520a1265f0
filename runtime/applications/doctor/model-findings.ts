/**
 * The model endpoint of a profile: which profile, whether the variable holding its key is set (the
 * key itself is never shown), and whether the endpoint answers a cheap request (GET /models) within
 * a few seconds.
 */
import { profileDefaults } from '../../config/defaults.js';
import type { ModelProfileConfig } from '../../config/types.js';
import { ManusError } from '../../contract/errors.js';
import { defaultApiKeyEnv, missingEnvironment, resolveModelConnection, type ModelConnection } from '../../services/model/model-connection.js';
import type { DoctorFinding } from '../../contract/doctor-finding.js';

const requestTimeoutMs = 5000;

/** `sendKeys` false: the profile's endpoint was chosen by a file the user has not trusted, so the request goes without the key and the headers from variables. */
export async function modelFindings(
  profileName: string,
  profile: ModelProfileConfig,
  environment: Readonly<Record<string, string | undefined>>,
  sendKeys: boolean,
): Promise<DoctorFinding[]> {
  const keyVariable = defaultApiKeyEnv(profile);
  const missing = missingEnvironment(profile, environment);
  const keyFinding: DoctorFinding = environment[keyVariable]
    ? { check: 'model key', status: 'ok', detail: `${keyVariable} is set (profile ${profileName})` }
    : {
        check: 'model key',
        status: missing.includes(keyVariable) ? 'missing' : 'ok',
        detail: `${keyVariable} is not set (profile ${profileName})${missing.includes(keyVariable) ? '' : '; endpoints such as Ollama or vLLM need none'}`,
        ...(missing.includes(keyVariable) ? { fix: `export ${keyVariable}=<your key>` } : {}),
      };
  const others = missing.filter((variable) => variable !== keyVariable);
  const findings: DoctorFinding[] = [keyFinding];
  if (others.length > 0) {
    findings.push({ check: 'model settings', status: 'missing', detail: `profile ${profileName} needs ${others.join(', ')}, which are not set`, fix: `set ${others.join(', ')}` });
  }
  let connection: ModelConnection;
  try {
    connection = await resolveModelConnection(profile, environment);
  } catch (error) {
    if (!ManusError.isInstance(error)) throw error;
    return [...findings, { check: 'model endpoint', status: 'missing', detail: `profile ${profileName}: no endpoint`, fix: error.message }];
  }
  return [...findings, await endpointFinding(profileName, connection, sendKeys)];
}

async function endpointFinding(profileName: string, connection: ModelConnection, sendKeys: boolean): Promise<DoctorFinding> {
  const shown = `${displayUrl(connection.baseUrl)} (profile ${profileName}, model ${connection.model || 'not set'})`;
  const request = modelsRequest(connection);
  const headers = sendKeys ? request.headers : { ...connection.profile.headers };
  const url = request.url;
  let response: Response;
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(requestTimeoutMs) });
  } catch (error) {
    const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${requestTimeoutMs / 1000} s` : causeOf(error);
    return { check: 'model endpoint', status: 'missing', detail: `${shown} does not answer: ${reason}`, fix: 'start the model server, or set OPENAI_BASE_URL or the profile\'s base_url to one that runs' };
  }
  if ((response.status === 401 || response.status === 403) && !sendKeys) {
    return {
      check: 'model endpoint',
      status: 'warning',
      detail: `${shown} answers, but wants a key, which was not sent: the endpoint comes from ${connection.profile.location?.file ?? 'a file'} you have not trusted`,
      fix: 'give the grant with trust: [env] in your config.yaml if that endpoint should get your keys',
    };
  }
  if (response.status === 401 || response.status === 403) {
    return { check: 'model endpoint', status: 'missing', detail: `${shown} refused the key (HTTP ${response.status})`, fix: `check the key in ${defaultApiKeyEnv(connection.profile)}` };
  }
  if (!response.ok) {
    return { check: 'model endpoint', status: 'warning', detail: `${shown} answers, but GET /models gave HTTP ${response.status}, so the model could not be checked` };
  }
  const models = await listedModels(response);
  if (models && models.length > 0 && connection.model && !models.includes(connection.model)) {
    return {
      check: 'model endpoint',
      status: 'warning',
      detail: `${shown} answers, but does not list the model ${connection.model}`,
      fix: `set MANUS_MODEL or the profile's model to one it lists, such as ${models.slice(0, 3).join(', ')}`,
    };
  }
  return { check: 'model endpoint', status: 'ok', detail: `${shown} answers` };
}

function modelsRequest(connection: ModelConnection): { url: string; headers: Record<string, string> } {
  if (connection.provider === 'azure') {
    return {
      url: `${connection.baseUrl}/openai/models?api-version=${encodeURIComponent(connection.profile.apiVersion ?? profileDefaults.api_version)}`,
      headers: { ...connection.headers, 'api-key': connection.apiKey },
    };
  }
  return { url: `${connection.baseUrl}/models`, headers: { ...connection.headers, authorization: `Bearer ${connection.apiKey}` } };
}

async function listedModels(response: Response): Promise<string[] | undefined> {
  try {
    const body = (await response.json()) as { data?: Array<{ id?: unknown }> };
    return Array.isArray(body.data) ? body.data.map((entry) => entry.id).filter((id): id is string => typeof id === 'string') : undefined;
  } catch {
    return undefined;
  }
}

/** The address without a user name or password in it. */
function displayUrl(address: string): string {
  try {
    const url = new URL(address);
    url.username = '';
    url.password = '';
    return url.toString().replace(/\/$/, '');
  } catch {
    return address;
  }
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
