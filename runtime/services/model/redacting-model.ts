/**
 * The model is a sink like any other: whatever reaches it (tool results, check output in a retry
 * message, page text a tool asks about, the task itself) is sent with the run's secrets hidden.
 * Images are sent as they are.
 */
import type { SecretRedactor } from '../secret-redaction.js';
import type { ChatMessage } from '../../contract/tool.js';
import type { ChatModel } from '../../contract/model-types.js';

export function redactingModel(model: ChatModel, redactor: SecretRedactor): ChatModel {
  if (!redactor.active) return model;
  // History is append-only and sent again every step: each message is redacted once, not once a step.
  const redacted = new WeakMap<ChatMessage, ChatMessage>();
  const redactOnce = (message: ChatMessage) => {
    let copy = redacted.get(message);
    if (!copy) redacted.set(message, (copy = redactMessage(message, redactor)));
    return copy;
  };
  return {
    complete: (request) => model.complete({ ...request, messages: request.messages.map(redactOnce) }),
    prices: model.prices,
    hasFallbacks: model.hasFallbacks,
  };
}

function redactMessage(message: ChatMessage, redactor: SecretRedactor): ChatMessage {
  switch (message.role) {
    case 'system':
    case 'tool':
      return { ...message, content: redactor.redact(message.content) };
    case 'user':
      return {
        ...message,
        content: typeof message.content === 'string'
          ? redactor.redact(message.content)
          : message.content.map((part) => (part.type === 'text' ? { ...part, text: redactor.redact(part.text) } : part)),
      };
    case 'assistant':
      return {
        ...message,
        content: message.content === null ? null : redactor.redact(message.content),
        ...(message.tool_calls && {
          tool_calls: message.tool_calls.map((call) => ({ ...call, function: { ...call.function, arguments: redactor.redact(call.function.arguments) } })),
        }),
      };
  }
}
