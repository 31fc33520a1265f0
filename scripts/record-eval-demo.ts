/**
 * Regenerates the recorded eval in recipes/examples/evals/country-capitals-recording/ by running
 * the country-capitals eval against the scripted model server, whose replies are written here by
 * hand: right for eighteen countries, wrong for two (the classic mistakes), so the table and the
 * page have something to show. Only what a replay reads is kept: eval.json without the machine's
 * settings, items.jsonl and each run's events.
 * Run: npx tsx scripts/record-eval-demo.ts
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startScriptedModelServer, type RecordedChatRequest } from '../test/support/scripted-model-server.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const examples = join(root, 'recipes', 'examples', 'evals');
const target = join(examples, 'country-capitals-recording');

const facts: Record<string, { capital: string; languages: string[]; currency: string }> = {
  Japan: { capital: 'Tokyo', languages: ['Japanese'], currency: 'Japanese yen (JPY)' },
  France: { capital: 'Paris', languages: ['French'], currency: 'euro (EUR)' },
  Germany: { capital: 'Berlin', languages: ['German'], currency: 'euro (EUR)' },
  Italy: { capital: 'Rome', languages: ['Italian'], currency: 'euro (EUR)' },
  Spain: { capital: 'Madrid', languages: ['Spanish'], currency: 'euro (EUR)' },
  Canada: { capital: 'Ottawa', languages: ['English', 'French'], currency: 'Canadian dollar (CAD)' },
  Australia: { capital: 'Sydney', languages: ['English'], currency: 'Australian dollar (AUD)' },
  Brazil: { capital: 'Brasília', languages: ['Portuguese'], currency: 'Brazilian real (BRL)' },
  Egypt: { capital: 'Cairo', languages: ['Arabic'], currency: 'Egyptian pound (EGP)' },
  India: { capital: 'New Delhi', languages: ['Hindi', 'English'], currency: 'Indian rupee (INR)' },
  Kenya: { capital: 'Nairobi', languages: ['Swahili', 'English'], currency: 'Kenyan shilling (KES)' },
  Mexico: { capital: 'Mexico City', languages: ['Spanish'], currency: 'Mexican peso (MXN)' },
  Norway: { capital: 'Oslo', languages: ['Norwegian', 'Sami'], currency: 'Norwegian krone (NOK)' },
  Peru: { capital: 'Lima', languages: ['Spanish', 'Quechua', 'Aymara'], currency: 'Peruvian sol (PEN)' },
  Poland: { capital: 'Warsaw', languages: ['Polish'], currency: 'Polish złoty (PLN)' },
  Portugal: { capital: 'Lisbon', languages: ['Portuguese'], currency: 'euro (EUR)' },
  'South Korea': { capital: 'Seoul', languages: ['Korean'], currency: 'South Korean won (KRW)' },
  Switzerland: { capital: 'Zurich', languages: ['German', 'French', 'Italian', 'Romansh'], currency: 'Swiss franc (CHF)' },
  Turkey: { capital: 'Ankara', languages: ['Turkish'], currency: 'Turkish lira (TRY)' },
  Vietnam: { capital: 'Hanoi', languages: ['Vietnamese'], currency: 'Vietnamese đồng (VND)' },
};

function countryOf(request: RecordedChatRequest): string {
  const task = (request.body.messages as Array<{ role: string; content: unknown }>).find((message) => message.role === 'user');
  return /currency of (.+)\.\n/.exec(String(task?.content ?? ''))?.[1] ?? 'unknown';
}

const server = await startScriptedModelServer({
  turns: [],
  sideTurn: (request) => {
    const country = countryOf(request);
    const answer = facts[country];
    if (!answer) throw new Error(`no facts for '${country}'`);
    return { toolCalls: [{ name: 'create_chat_completion', arguments: { response: { country, ...answer } } }], usage: { prompt_tokens: 410, completion_tokens: 48 } };
  },
});
const work = mkdtempSync(join(tmpdir(), 'manus-eval-demo-'));
try {
  cpSync(join(root, 'recipes'), join(work, 'recipes'), { recursive: true, filter: (source) => !source.includes('country-capitals-recording') });
  // Prices of a small hosted model, so the table and the page show cost and cost per success.
  writeFileSync(join(work, 'agents.yaml'), 'version: 1\nllm:\n  default:\n    price: { input_per_million: 0.15, output_per_million: 0.6 }\n');
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, [join(root, 'dist', 'bundle', 'main.js'), 'eval', 'recipes/examples/evals/country-capitals.eval.yaml', '--ci', '--concurrency', '4'], {
      cwd: work,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'demo-key', MANUS_MODEL: 'scripted-model', NO_COLOR: '1' },
      stdio: 'inherit',
    });
    child.on('close', resolve);
  });
  if (code !== 0) throw new Error(`the eval ended with exit ${code}`);
  const evals = join(work, '.manus', 'evals');
  const [id] = readdirSync(evals);
  const recorded = join(evals, id);
  rmSync(target, { recursive: true, force: true });
  const record = JSON.parse(readFileSync(join(recorded, 'eval.json'), 'utf8'));
  delete record.settings;
  cpSync(join(recorded, 'runs'), join(target, 'runs'), { recursive: true, filter: (source) => !source.includes(`${join('runs', '')}`) || !/workspace/.test(source) });
  writeFileSync(join(target, 'eval.json'), `${JSON.stringify(record, null, 2)}\n`);
  cpSync(join(recorded, 'items.jsonl'), join(target, 'items.jsonl'));
  process.stdout.write(`recorded ${record.items.length} runs in ${target}\n`);
} finally {
  await server.close();
  rmSync(work, { recursive: true, force: true });
}
