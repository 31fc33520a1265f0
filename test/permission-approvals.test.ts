/**
 * Approvals through the built CLI: a headless run that needs one stops as needs-input (exit 5)
 * with the call pending, and `manus resume --approve` runs it or `--deny` tells the agent why, with
 * the decision stored so a later resumption never asks again; `manus validate` names a bad rule.
 */
import { describe, expect, it } from 'vitest';
import { readEvents, runCli } from './support/run-cli.js';
import { terminate, toolMessages, writeLoopFixture } from './support/loop-fixture.js';
import { withScriptedModelServer as withServer, type RecordedChatRequest, type ScriptedModelServer, type ScriptedTurn } from './support/scripted-model-server.js';


const environment = (server: ScriptedModelServer) => ({ OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: 'scripted-model' });
const chatRequests = (server: ScriptedModelServer) => server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
const echo = (text: string): ScriptedTurn => ({ toolCalls: [{ name: 'echo', arguments: { text } }] });

/** Runs the fixture until it stops on the approval of its first echo call; returns the run id. */
async function stopOnApproval(fixture: string): Promise<string> {
  return withServer([echo('guarded')], async (server) => {
    const run = await runCli(['run', 'recipe.yaml', '--json', '--ci'], { cwd: fixture, env: environment(server) });
    expect(run.exitCode, run.stderr).toBe(5);
    expect(run.json).toMatchObject({ status: 'needs-input', error: { code: 'approval_needed' } });
    expect(run.stderr).toContain('echo needs approval');
    return run.json.runId as string;
  });
}

describe('an approval no one can give', () => {
  it('stops the run, and resume --approve runs the call without asking again', async () => {
    const fixture = writeLoopFixture({ agentExtra: 'permissions: { ask: ["echo(text=guarded*)"] }' });
    const runId = await stopOnApproval(fixture);
    await withServer([echo('unguarded'), terminate('finished')], async (server) => {
      const resumed = await runCli(['resume', runId, '--approve', 'call_0_0', '--json', '--ci'], { cwd: fixture, env: environment(server) });
      expect(resumed.exitCode, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain('running the echo call call_0_0, as you decided');
      const [first] = chatRequests(server);
      expect(toolMessages(first).map((message) => message.content)).toEqual(['echo: guarded']);
      const decided = readEvents(resumed.json.runDirectory).filter((event) => event.type === 'permission-decided');
      expect(decided.map((event) => [event.callId, event.decision, event.by])).toEqual([['call_0_0', 'allow', 'resume']]);
    });
  });

  it('tells the agent the reason given with --deny, and never runs the call', async () => {
    const fixture = writeLoopFixture({ agentExtra: 'permissions: { ask: [echo] }' });
    const runId = await stopOnApproval(fixture);
    await withServer([terminate('gave up')], async (server) => {
      const resumed = await runCli(['resume', runId, '--deny', 'call_0_0', '--reason', 'not on a Friday', '--json', '--ci'], { cwd: fixture, env: environment(server) });
      expect(resumed.exitCode, resumed.stderr).toBe(0);
      expect(toolMessages(chatRequests(server)[0]).map((message) => message.content)).toEqual([
        "Permission denied: the user did not approve the call to 'echo': not on a Friday.",
      ]);
      expect(readEvents(resumed.json.runDirectory).some((event) => event.type === 'tool-call-end' && event.content === 'echo: guarded')).toBe(false);
    });
  });

  it('refuses to resume without a decision, or with one for a call it did not stop on', async () => {
    const fixture = writeLoopFixture({ agentExtra: 'permissions: { ask: [echo] }' });
    const runId = await stopOnApproval(fixture);
    const without = await runCli(['resume', runId, '--ci'], { cwd: fixture });
    expect(without.exitCode).toBe(2);
    expect(without.stderr).toContain(`waiting for approval of the call call_0_0 to 'echo': continue it with --approve call_0_0 or --deny call_0_0`);
    const wrong = await runCli(['resume', runId, '--approve', 'call_9', '--ci'], { cwd: fixture });
    expect(wrong.exitCode).toBe(2);
    expect(wrong.stderr).toContain('did not stop on the call call_9; it waits for call_0_0 (echo)');
    const both = await runCli(['resume', runId, '--approve', 'call_0_0', '--deny', 'call_0_0', '--ci'], { cwd: fixture });
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain('given to both --approve and --deny');
  });

  it('refuses the call with a reason the model reads under on_ask: deny, and goes on', async () => {
    const fixture = writeLoopFixture({ agentExtra: 'permissions: { ask: [echo], on_ask: deny }' });
    await withServer([echo('guarded'), terminate('done without it')], async (server) => {
      const run = await runCli(['run', 'recipe.yaml', '--json', '--ci'], { cwd: fixture, env: environment(server) });
      expect(run.exitCode, run.stderr).toBe(0);
      expect(toolMessages(chatRequests(server)[1])[0].content).toBe(
        "Permission denied: the call to 'echo' needs approval (agent 'loop-test (inline)' asks about echo), and the run refuses every call that needs approval (on_ask: deny).",
      );
    });
  });
});

describe('manus validate', () => {
  it('names a rule for an unknown tool (a warning) or argument (an error), where it was written', async () => {
    const fixture = writeLoopFixture({ recipeExtra: 'permissions:\n  deny: ["ecoh(text=x)"]\n  ask: ["echo(txet=x)"]' });
    const result = await runCli(['validate', 'recipe.yaml'], { cwd: fixture });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/recipe\.yaml:\d+:\d+: warning: the recipe: permissions\.deny: 'ecoh\(text=x\)' names no tool this run can offer \(did you mean 'echo'\?\)/);
    expect(result.stderr).toMatch(/recipe\.yaml:\d+:\d+: error: the recipe: permissions\.ask: 'echo\(txet=x\)': echo has no argument 'txet' \(did you mean 'text'\?\)/);
  });

  it('stops a run before the first model request when a rule cannot be read', async () => {
    const fixture = writeLoopFixture({ agentExtra: 'permissions: { deny: ["echo(text=x"] }' });
    await withServer([terminate()], async (server) => {
      const run = await runCli(['run', 'recipe.yaml', '--ci'], { cwd: fixture, env: environment(server) });
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toMatch(/recipe\.yaml:\d+:\d+: error: permissions\.deny: 'echo\(text=x' opens '\(' but does not end with '\)'/);
      expect(chatRequests(server)).toHaveLength(0);
    });
  });
});
