/**
 * The model a run talks to for one profile: a client for its endpoint, redacted like every sink,
 * and, when the profile lists fallbacks, a chain that moves between them. The profile's own
 * endpoint is connected at once (a run records where it sends requests); a fallback only when the
 * chain first needs it.
 */
import type { ModelProfileConfig } from '../../config/types.js';
import type { SecretRedactor } from '../secret-redaction.js';
import type { TraceWriter } from '../../contract/tool.js';
import { FallbackModel } from './fallback-model.js';
import { ModelClient } from './model-client.js';
import { resolveModelConnection, type ModelConnection } from './model-connection.js';
import type { ChatModel } from '../../contract/model-types.js';
import { redactingModel } from './redacting-model.js';

export interface ProfileModelOptions {
  environment: Record<string, string | undefined>;
  modelOverride?: string;
  trace: TraceWriter;
  redactor: SecretRedactor;
}

export interface ProfileModel {
  model: ChatModel;
  /** The profile's own endpoint and model. */
  connection: ModelConnection;
}

export async function connectProfileModel(profile: ModelProfileConfig, options: ProfileModelOptions): Promise<ProfileModel> {
  const client = async (each: ModelProfileConfig, modelOverride?: string) => {
    const connection = await resolveModelConnection(each, options.environment, { modelOverride });
    const model = new ModelClient(connection, {
      onRetry: (notice) => options.trace.emit('model-retry', { ...notice, ...(each === profile ? {} : { profile: each.name }) }),
      onRateWait: (notice) => options.trace.emit('model-rate-wait', { ...notice }),
    });
    model.prepare();
    return { model, connection };
  };
  const own = await client(profile, options.modelOverride);
  const fallbacks = profile.fallbackProfiles ?? [];
  if (fallbacks.length === 0) return { model: redactingModel(own.model, options.redactor), connection: own.connection };
  const chain = new FallbackModel(
    [
      { name: profile.name, contextWindow: profile.contextWindow, model: async () => own.model },
      ...fallbacks.map((fallback) => ({ name: fallback.name, contextWindow: fallback.contextWindow, model: async () => (await client(fallback)).model })),
    ],
    {
      cooldownMs: profile.fallbackCooldownSeconds * 1000,
      onSwitch: (change) => options.trace.emit('profile-switch', { ...change }),
    },
  );
  return { model: redactingModel(chain, options.redactor), connection: own.connection };
}
