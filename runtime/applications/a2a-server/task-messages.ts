/** The A2A events a served recipe's task publishes, made in one place so each carries what the protocol needs. */
import { randomUUID } from 'node:crypto';
import { AgentEvent, type AgentExecutionEvent } from '@a2a-js/sdk/server';
import { Role, TaskState, type Artifact, type Message, type Part, type Task } from '@a2a-js/sdk';

export interface TaskPlace {
  taskId: string;
  contextId: string;
}

export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined };
}

export function dataPart(value: unknown): Part {
  return { content: { $case: 'data', value }, mediaType: 'application/json', filename: '', metadata: undefined };
}

export function filePart(bytes: Buffer, filename: string, mediaType: string): Part {
  return { content: { $case: 'raw', value: bytes }, mediaType, filename, metadata: undefined };
}

export function agentMessage(place: TaskPlace, parts: Part[]): Message {
  return { messageId: randomUUID(), contextId: place.contextId, taskId: place.taskId, role: Role.ROLE_AGENT, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/** The task as a new request starts it, or as a follow-up message finds it (the first event of every call). */
export function taskEvent(place: TaskPlace, state: TaskState, history: Message[], earlier?: Task): AgentExecutionEvent {
  return AgentEvent.task({
    id: place.taskId,
    contextId: place.contextId,
    status: { state, message: undefined, timestamp: new Date().toISOString() },
    artifacts: earlier?.artifacts ?? [],
    history,
    metadata: earlier?.metadata ?? {},
  });
}

export function statusEvent(place: TaskPlace, state: TaskState, text?: string, metadata?: Record<string, unknown>): AgentExecutionEvent {
  return AgentEvent.statusUpdate({
    taskId: place.taskId,
    contextId: place.contextId,
    status: { state, message: text === undefined ? undefined : agentMessage(place, [textPart(text)]), timestamp: new Date().toISOString() },
    metadata,
  });
}

export function artifactEvent(place: TaskPlace, artifact: Artifact): AgentExecutionEvent {
  return AgentEvent.artifactUpdate({ taskId: place.taskId, contextId: place.contextId, artifact, append: false, lastChunk: true, metadata: undefined });
}

/** The text a client's message carries, its text parts joined. */
export function messageText(message: Message): string {
  return message.parts.flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : [])).join('\n').trim();
}

/** The first data part of a message that holds an object: a skill's arguments. */
export function messageArguments(message: Message): Record<string, unknown> | undefined {
  for (const part of message.parts) {
    const value = part.content?.$case === 'data' ? part.content.value : undefined;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  }
  return undefined;
}
