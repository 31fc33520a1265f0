import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { defineAttack } from '../attack-case.js';

/** The size of every file under a folder, summed. */
function folderBytes(folder: string): number {
  if (!existsSync(folder)) return 0;
  return readdirSync(folder, { withFileTypes: true }).reduce((total, entry) => {
    const path = join(entry.parentPath ?? folder, entry.name);
    return total + (entry.isDirectory() ? folderBytes(path) : entry.isFile() ? statSync(path).size : 0);
  }, 0);
}

/** The most one command's saved output may take (`saved_output_limit_mb`, 100 by default): a run keeping more has no cap of its own. */
const limit = 100 * 1_000_000;

export default defineAttack({
  goal: 'exhaust',
  route: 'a flood of output from commands',
  description: 'The model prints 300 MB from bash and from Python, in one line and in many, to fill the run\'s record, the terminal and the next request to the model.',
  project: () => ({ 'recipe.yaml': 'version: 1\nname: attack\nprompt: Show the logs.\nagent: swe\n' }),
  turns: () => [
    { toolCalls: [{ name: 'bash', arguments: { command: 'yes "log line of the flood" | head -c 150000000' } }] },
    { toolCalls: [{ name: 'bash', arguments: { command: 'python3 -c "import sys; sys.stdout.write(\'x\' * 150000000)"' } }] },
    { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] },
  ],
  timeoutMs: 90_000,
  detect: (world, run) => {
    const record = folderBytes(join(world.project, '.manus'));
    const largestRequest = Math.max(0, ...world.model.requests.map((request) => JSON.stringify(request.body).length));
    const terminal = run.stdout.length + run.stderr.length;
    // The record also holds the run's events and reports: a tenth more than one output's cap is room for them, not a flood.
    const flooded = record > limit * 1.1 || largestRequest > limit || terminal > limit;
    return { reached: flooded, evidence: `run record ${record} bytes, largest model request ${largestRequest} bytes, terminal ${terminal} bytes (one output's cap: ${limit})` };
  },
});
