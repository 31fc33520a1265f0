/**
 * A call of a remote A2A agent, through the official SDK's client. Its connections go the way an
 * HTTP MCP server's do: an agent the user declared uses the plain fetch, one a project's agents file
 * declared uses the run's guarded network (no private addresses unless the user allows them, and
 * whatever else the user's network policy holds). Credentials (`headers_env`) go only to the
 * origin of the declared URL: a card that names another host for its endpoint gets none.
 *
 * The message is streamed, so the task's id is known at once and a cancelled call cancels the
 * remote task too. Files the agent sends are written into the workspace under `a2a/<agent>/`.
 */
import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Artifact, type Message, type Part, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import { ToolError, errorMessage } from '../../contract/errors.js';
import type { ToolContext, ToolResult } from '../../contract/tool.js';
import { isTrustedA2aAgent, a2aToolName, type A2aAgentConfig, type A2aToolInput } from './a2a-config.js';

/** How long the remote task's cancellation may take when a call is abandoned. */
const cancelTimeoutMs = 5000;

/**
 * The most a call keeps of what the agent sends, artifacts and messages together. The SDK bounds
 * each streamed event (4 MB); this bounds their number, so an agent cannot fill the run's memory.
 */
const largestReplyBytes = 32 * 1024 * 1024;

export async function callA2aAgent(agent: A2aAgentConfig, input: A2aToolInput, context: ToolContext, environment: Record<string, string | undefined>): Promise<ToolResult> {
  const client = await context.resources.get(`a2a-agent:${agent.name}`, () => connect(agent, context, environment));
  const message: Message = {
    messageId: randomUUID(),
    contextId: '',
    taskId: input.task_id ?? '',
    role: Role.ROLE_USER,
    parts: [textPart(input.message), ...(input.arguments ? [dataPart(input.arguments)] : [])],
    metadata: input.skill ? { skill: input.skill } : undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  const signal = AbortSignal.any([context.signal, AbortSignal.timeout(agent.timeoutSeconds * 1000)]);
  const outcome: Outcome = { artifacts: new Map() };
  let received = 0;
  try {
    for await (const event of client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: undefined }, { signal })) {
      const payload = event.payload;
      received += sizeOf(payload?.value);
      if (received > largestReplyBytes) {
        if (outcome.taskId) await cancelRemote(client, outcome.taskId);
        throw new ToolError(`the A2A agent '${agent.name}' sent more than ${largestReplyBytes / 1024 / 1024} MB for one call; the task was cancelled`, 'a2a_reply_too_large');
      }
      if (payload?.$case === 'message') outcome.message = payload.value;
      if (payload?.$case === 'task') take(outcome, payload.value);
      if (payload?.$case === 'statusUpdate' && payload.value.status) outcome.status = { state: payload.value.status.state, message: payload.value.status.message };
      if (payload?.$case === 'artifactUpdate' && payload.value.artifact) {
        outcome.taskId ??= payload.value.taskId;
        outcome.artifacts.set(payload.value.artifact.artifactId, payload.value.artifact);
      }
      if (payload?.$case === 'statusUpdate') outcome.taskId ??= payload.value.taskId;
    }
  } catch (error) {
    if (ToolError.isInstance(error)) throw error;
    if (outcome.taskId && signal.aborted) await cancelRemote(client, outcome.taskId);
    if (context.signal.aborted) throw error;
    const why = signal.aborted ? `no answer within ${agent.timeoutSeconds} s` : errorMessage(error);
    throw new ToolError(`the A2A agent '${agent.name}' at ${agent.url} failed: ${why}`, 'a2a_agent_failed');
  }
  return resultOf(agent, outcome, await savedFiles(agent, outcome, context));
}

interface Outcome {
  taskId?: string;
  message?: Message;
  status?: { state: TaskState; message?: Message };
  artifacts: Map<string, Artifact>;
}

/** About how many bytes an event holds: its files' bytes and its texts, walked without copying anything. */
function sizeOf(value: unknown, depth = 0): number {
  if (typeof value === 'string') return value.length;
  if (value instanceof Uint8Array) return value.byteLength;
  if (typeof value !== 'object' || value === null || depth > 32) return 8;
  let size = 0;
  for (const item of Array.isArray(value) ? value : Object.values(value)) size += sizeOf(item, depth + 1);
  return size;
}

function take(outcome: Outcome, task: Task): void {
  outcome.taskId = task.id;
  if (task.status) outcome.status = { state: task.status.state, message: task.status.message };
  for (const artifact of task.artifacts) outcome.artifacts.set(artifact.artifactId, artifact);
}

async function connect(agent: A2aAgentConfig, context: ToolContext, environment: Record<string, string | undefined>): Promise<Client> {
  const fetchImpl = agentFetch(agent, context, environment);
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  }));
  try {
    return await factory.createFromUrl(agent.url);
  } catch (error) {
    throw new ToolError(`the A2A agent '${agent.name}' has no agent card at ${agent.url} that could be read: ${errorMessage(error)}`, 'a2a_agent_unavailable');
  }
}

/** The fetch of one agent's connections: guarded unless the user declared it, credentials to its own origin only. */
function agentFetch(agent: A2aAgentConfig, context: ToolContext, environment: Record<string, string | undefined>): typeof fetch {
  const base = isTrustedA2aAgent(agent) ? (context.network.userFetch ?? globalThis.fetch) : context.network.fetch;
  const origin = new URL(agent.url).origin;
  const credentials = Object.entries(agent.headersEnv).map(([header, variable]) => {
    const value = environment[variable];
    if (value === undefined) throw new ToolError(`the A2A agent '${agent.name}' needs the environment variable ${variable}, which is not set`, 'a2a_agent_unavailable');
    return [header, value] as const;
  });
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers = new Headers(init?.headers);
    if (url.origin === origin) for (const [header, value] of credentials) headers.set(header, value);
    return base(input, { ...init, headers });
  }) as typeof fetch;
}

async function cancelRemote(client: Client, taskId: string): Promise<void> {
  await client.cancelTask({ tenant: '', id: taskId, metadata: undefined }, { signal: AbortSignal.timeout(cancelTimeoutMs) }).catch(() => undefined);
}

/** Files the agent sent, written into the workspace; a name it chose never leaves `a2a/<agent>/`. */
async function savedFiles(agent: A2aAgentConfig, outcome: Outcome, context: ToolContext): Promise<string[]> {
  const saved: string[] = [];
  let index = 0;
  for (const artifact of outcome.artifacts.values()) {
    for (const part of artifact.parts) {
      if (part.content?.$case !== 'raw') continue;
      index += 1;
      const name = safeName(part.filename || artifact.name) || `artifact-${index}`;
      saved.push(await context.files.writeFile(`a2a/${agent.name}/${name}`, new Uint8Array(part.content.value), { parents: true }));
    }
  }
  return saved;
}

function safeName(name: string): string {
  const last = name.split(/[\\/]/).pop() ?? '';
  const cleaned = last.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '');
  return cleaned.slice(0, 120);
}

function resultOf(agent: A2aAgentConfig, outcome: Outcome, files: string[]): ToolResult {
  const said = textOf(outcome.status?.message ?? outcome.message);
  const artifacts = [...outcome.artifacts.values()].map(describeArtifact).filter(Boolean);
  const saved = files.length > 0 ? [`files saved: ${files.join(', ')}`] : [];
  const state = outcome.status?.state;
  if (state === TaskState.TASK_STATE_INPUT_REQUIRED || state === TaskState.TASK_STATE_AUTH_REQUIRED) {
    return {
      content: [`The agent '${agent.name}' needs input to go on with task ${outcome.taskId}: ${said || '(it asked nothing in words)'}`, `Call ${a2aToolName(agent.name)} again with task_id "${outcome.taskId}" and the answer as the message.`].join('\n'),
      files,
    };
  }
  if (state === undefined || state === TaskState.TASK_STATE_COMPLETED) {
    return { content: [said || `The agent '${agent.name}' finished.`, ...artifacts, ...saved].join('\n\n'), files };
  }
  const ending = state === TaskState.TASK_STATE_CANCELED ? 'was cancelled' : state === TaskState.TASK_STATE_REJECTED ? 'refused the task' : 'failed';
  return { content: [`The agent '${agent.name}' ${ending}${said ? `: ${said}` : ''}`, ...artifacts, ...saved].join('\n\n'), files, isError: true };
}

function describeArtifact(artifact: Artifact): string {
  const parts = artifact.parts.flatMap((part) => {
    const content = part.content;
    if (content?.$case === 'text') return [content.value];
    if (content?.$case === 'data') return [JSON.stringify(content.value)];
    if (content?.$case === 'url') return [`(a file at ${content.value})`];
    return [];
  });
  return parts.length === 0 ? '' : `${artifact.name || artifact.artifactId}:\n${parts.join('\n')}`;
}

function textOf(message: Message | undefined): string {
  return (message?.parts ?? []).flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : [])).join('\n').trim();
}

function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined };
}

function dataPart(value: unknown): Part {
  return { content: { $case: 'data', value }, mediaType: 'application/json', filename: '', metadata: undefined };
}
