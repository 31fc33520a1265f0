/**
 * The judge: a rubric scored 0 to 1, with a reason, by a model profile the eval names, kept apart
 * from the models under test. A profile with an endpoint of its own from a file that is not trusted
 * would send the user's key to a host that file chose, so it is a request for `env` like any such
 * profile. The judge sees the run's answer, already redacted, and the row's expectations.
 */
import type { ChatModel } from '../../contract/model-types.js';
import type { ModelProfileConfig } from '../../config/types.js';
import { UsageError } from '../../contract/errors.js';
import { didYouMean } from '../../contract/did-you-mean.js';
import type { TrustRequest } from '../../config/run-plan.js';
import { connectProfileModel } from '../../services/model/profile-model.js';
import type { SecretRedactor } from '../../services/secret-redaction.js';
import { profileEndpointRequest, profileKeys } from '../../runs/recipe/recipe-requests.js';
import type { EvalScorer } from './eval-file.js';
import type { JudgeScorer, ScoredRun } from './scorers.js';
import type { ReplyCache } from './reply-cache.js';

const judgeSchema = {
  type: 'object',
  required: ['score', 'reason'],
  additionalProperties: false,
  properties: { score: { type: 'number', minimum: 0, maximum: 1 }, reason: { type: 'string' } },
};

/** The profiles the eval's judges use, found among the agents files' profiles. */
export function judgeProfiles(scorers: readonly EvalScorer[], defaultJudge: string | undefined, profiles: ReadonlyMap<string, ModelProfileConfig>, modelsUnderTest: ReadonlyArray<string | undefined>): Map<string, ModelProfileConfig> {
  const used = new Map<string, ModelProfileConfig>();
  for (const scorer of scorers) {
    if (scorer.type !== 'judge') continue;
    const name = scorer.settings.profile ?? defaultJudge!;
    const profile = profiles.get(name);
    if (!profile) throw new UsageError(`the judge scorer '${scorer.name}' names the model profile '${name}', which no agents.yaml declares${didYouMean(name, profiles.keys())}`);
    if (modelsUnderTest.includes(name)) throw new UsageError(`the judge profile '${name}' is also a model under test; a judge must be kept apart from the models it scores`);
    used.set(name, profile);
  }
  return used;
}

/** What the judges' profiles ask the user to grant. */
export function judgeTrustRequests(profiles: ReadonlyMap<string, ModelProfileConfig>): TrustRequest[] {
  return [...profiles.values()].flatMap((profile) => {
    const request = profileEndpointRequest(profile, profileKeys(profile));
    return request ? [request] : [];
  });
}

export interface JudgeOptions {
  profiles: ReadonlyMap<string, ModelProfileConfig>;
  defaultJudge?: string;
  environment: Record<string, string | undefined>;
  redactor: SecretRedactor;
  cache?: ReplyCache;
}

/** Judges each run with its scorer's profile; one connection per profile. */
export function createJudge(options: JudgeOptions): JudgeScorer {
  const models = new Map<string, Promise<ChatModel>>();
  const modelFor = (name: string) => {
    let model = models.get(name);
    if (!model) {
      const profile = options.profiles.get(name)!;
      // The judge's own model, whatever MANUS_MODEL says of the models under test.
      model = connectProfileModel(profile, { environment: options.environment, ...(profile.model ? { modelOverride: profile.model } : {}), trace: { emit: () => undefined }, redactor: options.redactor })
        .then(({ model: connected }) => (options.cache ? options.cache.wrap(connected, `judge:${name}`, 0) : connected));
      models.set(name, model);
    }
    return model;
  };
  return async (scorer: EvalScorer, run: ScoredRun) => {
    const model = await modelFor(scorer.settings.profile ?? options.defaultJudge!);
    const reply = await model.complete({
      messages: [
        { role: 'system', content: 'You grade an AI agent\'s answer against a rubric. Reply with JSON only: {"score": a number from 0 (fails the rubric) to 1 (fully meets it), "reason": one sentence}.' },
        { role: 'user', content: judgeTask(scorer.settings.rubric!, run) },
      ],
      responseSchema: judgeSchema,
    });
    return parseVerdict(reply.content ?? '');
  };
}

function judgeTask(rubric: string, run: ScoredRun): string {
  const expected = run.expected === undefined ? '' : `\n\nExpected (from the dataset):\n${typeof run.expected === 'string' ? run.expected : JSON.stringify(run.expected)}`;
  const structured = run.structured === undefined ? '' : `\n\nStructured answer:\n${JSON.stringify(run.structured)}`;
  return `Rubric:\n${rubric}${expected}\n\nThe agent's answer (status ${run.status}):\n${run.answer}${structured}`;
}

export function parseVerdict(text: string): { score: number; reason: string } {
  const json = /\{[\s\S]*\}/.exec(text)?.[0];
  try {
    const verdict = JSON.parse(json ?? text) as { score?: unknown; reason?: unknown };
    const score = Number(verdict.score);
    if (!Number.isFinite(score)) return { score: 0, reason: `the judge gave no score: ${text.slice(0, 200)}` };
    return { score, reason: typeof verdict.reason === 'string' ? verdict.reason : '' };
  } catch {
    return { score: 0, reason: `the judge's reply is not JSON: ${text.slice(0, 200)}` };
  }
}
