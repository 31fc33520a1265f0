/**
 * The SDK's agent executor for served recipes: a new message starts a task that runs the recipe
 * its metadata names (`skill`, or the only one served); a message on a live task continues it (the
 * answer to its question); cancel stops its run.
 */
import { TaskState } from '@a2a-js/sdk';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import type { ServedRecipe } from './agent-card.js';
import { statusEvent, taskEvent, type TaskPlace } from './task-messages.js';
import { TaskRun, type TaskRunOptions } from './task-run.js';

export class RecipeExecutor implements AgentExecutor {
  private readonly runs = new Map<string, TaskRun>();

  constructor(private readonly served: readonly ServedRecipe[], private readonly options: TaskRunOptions) {}

  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const place: TaskPlace = { taskId: context.taskId, contextId: context.contextId };
    const live = this.runs.get(context.taskId);
    if (live) return live.continueWith(context, bus);
    const chosen = this.choose(context);
    if (typeof chosen === 'string') {
      bus.publish(taskEvent(place, TaskState.TASK_STATE_SUBMITTED, [context.userMessage]));
      bus.publish(statusEvent(place, TaskState.TASK_STATE_REJECTED, chosen));
      return;
    }
    const run = new TaskRun(place, chosen.recipe, context, bus, this.options);
    this.runs.set(context.taskId, run);
    void run.finished.then(() => this.runs.delete(context.taskId));
    return run.currentTurn();
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const run = this.runs.get(taskId);
    if (run) return run.cancel(bus);
    // The handler waits for a final state on the bus: a task with no run still gets one.
    bus.publish(statusEvent({ taskId, contextId: '' }, TaskState.TASK_STATE_CANCELED, 'cancelled'));
  };

  /** Stops every running task; each run ends as interrupted. */
  async stopAll(): Promise<void> {
    await Promise.allSettled([...this.runs.values()].map((run) => run.cancel(undefined)));
  }

  private choose(context: RequestContext): ServedRecipe | string {
    const asked = context.userMessage.metadata?.skill ?? context.request.metadata?.skill;
    if (asked === undefined) {
      if (this.served.length === 1) return this.served[0];
      return `name the skill to run in the message's metadata as "skill": one of ${this.served.map((each) => each.id).join(', ')}`;
    }
    return this.served.find((each) => each.id === asked) ?? `there is no skill '${String(asked)}'; the skills are ${this.served.map((each) => each.id).join(', ')}`;
  }
}
