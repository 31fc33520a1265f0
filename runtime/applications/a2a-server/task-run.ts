/**
 * One A2A task: a recipe run, as `manus run` makes it, recorded in the runs folder. Its steps are
 * streamed as `working` status updates; the files it wrote become artifacts; it ends `completed`,
 * `failed`, or `canceled` (the run then ends as interrupted, and can be resumed like any other).
 *
 * A question the run asks (`ask_human`, or a permission prompt) sets the task to `input-required`
 * and ends the client's turn, while the run waits in this process. The client's next message on
 * the task is the answer, and the same run goes on from where it asked. A turn is one `execute`
 * of the SDK's executor: it ends on a question or on the end of the run.
 */
import { TaskState, type Artifact } from '@a2a-js/sdk';
import type { ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { extname } from 'node:path';
import { ConfigError, InterruptedError, errorMessage } from '../../contract/errors.js';
import type { Recipe } from '../../config/types.js';
import type { TrustGrant } from '../../contract/trust-grants.js';
import type { SandboxSettings } from '../../contract/tool.js';
import { redactorForPlan } from '../../runs/plan-secrets.js';
import { resolveRecipe } from '../../runs/recipe/resolve-recipe.js';
import { executeRun, type RunResult } from '../../runs/run.js';
import { endingText } from '../../runs/run-status.js';
import { WorkspaceFiles } from '../../services/workspace-files.js';
import type { SecretRedactor } from '../../services/secret-redaction.js';
import { parameterArguments, takesTask, taskArgument } from '../mcp-server/recipe-input-schema.js';
import { artifactEvent, dataPart, filePart, messageArguments, messageText, statusEvent, taskEvent, textPart, type TaskPlace } from './task-messages.js';

export interface TaskRunOptions {
  cwd: string;
  environment: Record<string, string | undefined>;
  runsDirectory?: string;
  trust: TrustGrant[];
  sandbox?: SandboxSettings['kind'];
}

/** Where a run's id and outcome travel in a final status's metadata. */
export const runMetadataKey = 'manus-runtime/run';

/** Files larger than this are named in the answer rather than sent as artifacts. */
const largestArtifactBytes = 10 * 1024 * 1024;

interface Waiting {
  resolve(answer: string): void;
  reject(error: Error): void;
}

export class TaskRun {
  private bus: ExecutionEventBus;
  private endTurn: () => void = () => undefined;
  private waiting: Waiting | undefined;
  /** Questions asked at once (tools run concurrently) are put to the client one after another. */
  private asking: Promise<unknown> = Promise.resolve();
  private readonly interrupt = new AbortController();
  private redactor: SecretRedactor | undefined;
  readonly finished: Promise<void>;
  private turn: Promise<void>;

  constructor(private readonly place: TaskPlace, private readonly recipe: Recipe, context: RequestContext, bus: ExecutionEventBus, private readonly options: TaskRunOptions) {
    this.bus = bus;
    this.turn = this.newTurn();
    this.bus.publish(taskEvent(place, TaskState.TASK_STATE_SUBMITTED, [context.userMessage]));
    this.finished = this.run(context).finally(() => this.endTurn());
  }

  /** Settles when the run asks a question or ends: the end of the client's turn. */
  currentTurn(): Promise<void> {
    return this.turn;
  }

  /** A later message on the task: the answer to the question asked, if one was; either way the turn goes on. */
  continueWith(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    this.bus = bus;
    bus.publish(taskEvent(this.place, TaskState.TASK_STATE_WORKING, context.task?.history ?? [context.userMessage], context.task));
    const waiting = this.waiting;
    if (!waiting) return this.currentTurn();
    this.waiting = undefined;
    this.turn = this.newTurn();
    bus.publish(statusEvent(this.place, TaskState.TASK_STATE_WORKING, 'answer received'));
    waiting.resolve(messageText(context.userMessage));
    return this.currentTurn();
  }

  /** Stops the run; it ends as interrupted and the task as canceled, published on `bus` when given. */
  async cancel(bus?: ExecutionEventBus): Promise<void> {
    if (bus) this.bus = bus;
    const reason = new InterruptedError('cancelled by the A2A client');
    this.interrupt.abort(reason);
    this.waiting?.reject(reason);
    this.waiting = undefined;
    await this.finished;
  }

  private newTurn(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.endTurn = resolve;
    });
  }

  private readonly ask = (question: string, options: { permission?: boolean; signal?: AbortSignal }): Promise<string> => {
    const asked = this.asking.then(() => this.askNow(question, options));
    this.asking = asked.catch(() => undefined);
    return asked;
  };

  private askNow(question: string, options: { permission?: boolean; signal?: AbortSignal }): Promise<string> {
    if (this.interrupt.signal.aborted) return Promise.reject(this.interrupt.signal.reason as Error);
    return new Promise<string>((resolve, reject) => {
      const abandon = () => {
        if (this.waiting?.reject !== reject) return;
        this.waiting = undefined;
        reject(options.signal?.reason instanceof Error ? options.signal.reason : new InterruptedError());
      };
      options.signal?.addEventListener('abort', abandon, { once: true });
      this.waiting = {
        resolve: (answer) => {
          options.signal?.removeEventListener('abort', abandon);
          resolve(answer);
        },
        reject,
      };
      // The question is the model's text: the run's secrets are hidden from it as from any output.
      const text = this.redact(question);
      const shown = options.permission ? `${text}\nAnswer yes to allow it; any other answer refuses.` : text;
      this.bus.publish(statusEvent(this.place, TaskState.TASK_STATE_INPUT_REQUIRED, shown, { 'manus-runtime/question': { permission: options.permission === true } }));
      this.endTurn();
    });
  }

  private async run(context: RequestContext): Promise<void> {
    let result: RunResult;
    try {
      const input = argumentsOf(this.recipe, context);
      const plan = await resolveRecipe(this.recipe.file, {
        cwd: this.options.cwd,
        environment: this.options.environment,
        overrides: { trust: this.options.trust, sandbox: this.options.sandbox, prompt: input.prompt, parameters: parameterArguments(this.recipe, input.values) },
      });
      this.redactor = redactorForPlan(plan, this.options.environment);
      this.bus.publish(statusEvent(this.place, TaskState.TASK_STATE_WORKING, `running the recipe ${this.recipe.name}`));
      result = await executeRun(plan, {
        cwd: this.options.cwd,
        environment: this.options.environment,
        signal: this.interrupt.signal,
        runsDirectory: this.options.runsDirectory,
        interactive: false,
        answers: [],
        asker: this.ask,
        redactor: this.redactor,
        onEvent: (type, data) => {
          if (type === 'step-end' && data.path === undefined) this.progress(`step ${String(data.step)} of at most ${plan.budgets.steps}`);
          if (type === 'flow-step-end' && !String(data.path).includes('/')) this.progress(`flow step ${String(data.path)}: ${String(data.status)}`);
        },
      });
    } catch (error) {
      // A recipe that no longer resolves, arguments it refuses, or grants nobody gave: said, never run.
      const state = ConfigError.isInstance(error) ? TaskState.TASK_STATE_REJECTED : TaskState.TASK_STATE_FAILED;
      this.bus.publish(statusEvent(this.place, state, this.redact(errorMessage(error))));
      return;
    }
    await this.finish(this.redactor!.redactValue(result)).catch((error: unknown) => {
      this.bus.publish(statusEvent(this.place, TaskState.TASK_STATE_FAILED, `run ${result.runId} ended ${result.status}, but its result could not be sent: ${this.redact(errorMessage(error))}`));
    });
  }

  private progress(text: string): void {
    if (!this.waiting) this.bus.publish(statusEvent(this.place, TaskState.TASK_STATE_WORKING, text));
  }

  private async finish(result: RunResult): Promise<void> {
    const metadata = { [runMetadataKey]: { id: result.runId, status: result.status, steps: result.steps, files: result.files } };
    if (result.status === 'success') {
      const answer: Artifact = {
        artifactId: 'answer',
        name: 'answer',
        description: `The answer of run ${result.runId}.`,
        parts: [textPart(result.answer), ...(result.structured === undefined ? [] : [dataPart(result.structured)])],
        metadata: undefined,
        extensions: [],
      };
      this.bus.publish(artifactEvent(this.place, answer));
    }
    for (const artifact of await fileArtifacts(result)) this.bus.publish(artifactEvent(this.place, artifact));
    if (result.status === 'success') {
      this.bus.publish(statusEvent(this.place, TaskState.TASK_STATE_COMPLETED, result.answer, metadata));
      return;
    }
    const failedChecks = result.checks.filter((check) => !check.passed && !check.skipped).map((check) => `check failed: ${check.name}: ${check.detail}`);
    const text = [`run ${result.runId} ended: ${endingText(result, result.answer)}`, ...failedChecks].join('\n');
    const state = result.status === 'interrupted' ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_FAILED;
    this.bus.publish(statusEvent(this.place, state, text, metadata));
  }

  private redact(text: string): string {
    return this.redactor ? this.redactor.redact(text) : text;
  }
}

/**
 * A message's arguments for the recipe: a data part holds them; text is the task of a recipe that
 * takes one, or the value of its only required parameter.
 */
function argumentsOf(recipe: Recipe, context: RequestContext): { values: Record<string, unknown>; prompt?: string } {
  const values = { ...(messageArguments(context.userMessage) ?? {}) };
  const text = messageText(context.userMessage);
  if (takesTask(recipe)) {
    const prompt = typeof values[taskArgument] === 'string' ? values[taskArgument] : text;
    if (!prompt) throw new ConfigError([{ severity: 'error', message: `the recipe ${recipe.name} needs a task: send it as a text part`, location: { file: recipe.file } }]);
    return { values, prompt };
  }
  const required = recipe.parameters.filter((parameter) => parameter.required && parameter.default === undefined);
  if (text && required.length === 1 && values[required[0].name] === undefined) values[required[0].name] = text;
  return { values };
}

/** The files the run wrote, read without following a link out of its workspace. */
async function fileArtifacts(result: RunResult): Promise<Artifact[]> {
  if (result.files.length === 0) return [];
  const files = new WorkspaceFiles(result.workspace);
  const artifacts: Artifact[] = [];
  for (const path of result.files) {
    const parts = await files.readFile(path, { maximumBytes: largestArtifactBytes })
      .then((bytes) => [filePart(bytes, path, mediaTypeOf(path))])
      .catch((error: unknown) => [textPart(`${path} was not sent: ${errorMessage(error)}`)]);
    artifacts.push({ artifactId: `file:${path}`, name: path, description: `A file the run wrote: ${path}`, parts, metadata: undefined, extensions: [] });
  }
  return artifacts;
}

const mediaTypes: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.html': 'text/html',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.pdf': 'application/pdf',
};

function mediaTypeOf(path: string): string {
  return mediaTypes[extname(path).toLowerCase()] ?? 'application/octet-stream';
}
