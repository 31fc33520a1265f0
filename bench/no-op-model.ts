/**
 * The benchmarks' model in a process of its own, as a remote model would be: the scripted server
 * answering each request from its own history (the no-op tool until STEPS results are in, then
 * terminate), always after REPLY_MS. It prints its base URL on the first line of stdout and
 * serves until stdin closes.
 */
import { startScriptedModelServer, type RecordedChatRequest } from '../test/support/scripted-model-server.js';

const steps = Number(process.env.STEPS ?? 30);
const replyMs = Number(process.env.REPLY_MS ?? 50);

const server = await startScriptedModelServer({
  turns: [],
  sideTurn: (request: RecordedChatRequest) => {
    const results = (request.body.messages as Array<{ role: string }>).filter((message) => message.role === 'tool').length;
    return results < steps
      ? { delayMs: replyMs, toolCalls: [{ name: 'noop', arguments: { note: `step ${results + 1}` } }] }
      : { delayMs: replyMs, toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] };
  },
  // Nothing reads them back: keeping every request would only grow the process.
  onRecorded: () => server.requests.splice(0),
});
process.stdout.write(`${server.baseUrl}\n`);
process.stdin.resume();
process.stdin.on('end', () => void server.close().then(() => process.exit(0)));
