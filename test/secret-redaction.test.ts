import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isSecretHeader, literalSecretHeaders } from '../runtime/config/literal-secrets.js';
import { parseYamlText } from '../runtime/config/yaml-source.js';
import type { ModelProfileConfig } from '../runtime/config/types.js';
import { readModelProfile } from '../runtime/runs/recipe/load-agents.js';
import { createProgressReporter } from '../runtime/services/progress-reporter.js';
import { collectSecrets, redactionMarker, SecretRedactor } from '../runtime/services/secret-redaction.js';
import { resolveRecipe } from '../runtime/runs/recipe/resolve-recipe.js';
import { redactorForPlan } from '../runtime/runs/plan-secrets.js';
import { runScripted, terminate, writeLoopFixture } from './support/loop-fixture.js';
import { makeFixture, runCli } from './support/run-cli.js';
import { startScriptedModelServer, type RecordedChatRequest } from './support/scripted-model-server.js';

const base64 = (bytes: Buffer) => bytes.toString('base64');
const base64Url = (bytes: Buffer) => bytes.toString('base64url');

/**
 * Every way the tests look for a leaked secret: as written, URL-encoded, and a piece from the middle
 * of its base64 and base64url forms at each byte alignment (the ends, which depend on neighbouring
 * bytes, are left out generously so the pieces occur in any base64 text that contains the secret).
 */
function leakedForms(secret: string): string[] {
  const forms = [secret, encodeURIComponent(secret)];
  for (let offset = 0; offset < 3; offset += 1) {
    const bytes = Buffer.concat([Buffer.alloc(offset), Buffer.from(secret)]);
    forms.push(base64(bytes).slice(4, -4), base64Url(bytes).slice(4, -4));
  }
  return forms;
}

function expectNoLeak(text: string, secret: string, where: string): void {
  for (const form of leakedForms(secret)) expect(text.includes(form), `${where} contains ${JSON.stringify(form)}`).toBe(false);
}

function profile(overrides: Partial<ModelProfileConfig> = {}): ModelProfileConfig {
  return { ...readModelProfile('default'), ...overrides };
}

describe('collecting secrets', () => {
  it('takes named variables, the conventional key variables and anything named like a secret, from 8 characters', () => {
    const secrets = collectSecrets(
      {
        MY_LLM: 'abcdef123',
        GITHUB_TOKEN: 'ghp_1234567890',
        OPENAI_API_KEY: 'sk-openai-1',
        PROXY_AUTH: 'user:password1',
        GIT_AUTHOR_NAME: 'Ada Lovelace',
        HOME: '/root/home-folder',
        SHORT_KEY: 'abc1234',
        NAMED_SHORT: 'short',
      },
      ['MY_LLM', 'NAMED_SHORT'],
    );
    expect(secrets.sort()).toEqual(['abcdef123', 'ghp_1234567890', 'sk-openai-1', 'user:password1']);
  });

  it('adds the profile key variable and the header variables, and the token inside a credential header', () => {
    const redactor = SecretRedactor.forRun(
      profile({ apiKeyEnv: 'LLM_CREDENTIAL_VALUE', headers: { Authorization: 'Bearer literal-token-123' }, headersEnv: { 'X-Gateway': 'GATEWAY_HEADER' } }),
      { LLM_CREDENTIAL_VALUE: 'llm-value-0001', GATEWAY_HEADER: 'Basic dXNlcjpodW50ZXIyLXBhc3N3b3Jk' },
    );
    expect(redactor.redact('a llm-value-0001 b literal-token-123 c Basic dXNlcjpodW50ZXIyLXBhc3N3b3Jk d hunter2-password')).toBe(
      `a ${redactionMarker} b ${redactionMarker} c ${redactionMarker} d ${redactionMarker}`,
    );
  });
});

describe('values handed to a sandbox or a server', () => {
  it('are secrets: every pass_env value, the password of a URL, and MCP env values named like secrets', async () => {
    const fixture = makeFixture({
      'recipe.yaml': [
        'version: 1',
        'name: passing',
        'prompt: go',
        'agent:',
        '  system_prompt: You are a test agent.',
        '  tools: [bash, terminate]',
        'sandbox: {kind: bwrap, pass_env: [DATABASE_URL, REGION_NAME]}',
        'mcp_servers:',
        '  db:',
        '    command: node',
        '    env: {DB_PASSWORD: literal-db-password, NODE_ENV: production, LINK: "redis://cache:redis-pass-123@localhost:6379"}',
      ].join('\n'),
    });
    const plan = await resolveRecipe('recipe.yaml', { cwd: fixture, overrides: { trust: ['env', 'mcp'] } } as never);
    const environment = { DATABASE_URL: 'postgres://app:s3cr%40t-pass@db.local/app', REGION_NAME: 'eu-central-zone-7' };
    const redactor = redactorForPlan(plan, environment);
    expect(redactor.redact('url postgres://app:s3cr%40t-pass@db.local/app, password s3cr@t-pass, region eu-central-zone-7')).toBe(
      `url ${redactionMarker}, password ${redactionMarker}, region ${redactionMarker}`,
    );
    expect(redactor.redact('literal-db-password redis-pass-123 production')).toBe(`${redactionMarker} ${redactionMarker} production`);
  });
});

describe('the secret redactor', () => {
  const secret = 'sk-test+4f7a/9c2e=b81d?key';

  it('hides a secret reversed and in hexadecimal, which are a command away inside a sandbox', () => {
    const redactor = new SecretRedactor([secret]);
    const hexadecimal = Buffer.from(secret).toString('hex');
    const text = `${[...secret].reverse().join('')} ${hexadecimal} ${hexadecimal.toUpperCase()}`;
    expect(redactor.redact(text)).toBe(`${redactionMarker} ${redactionMarker} ${redactionMarker}`);
  });

  it('hides a secret as written and URL-encoded', () => {
    const redactor = new SecretRedactor([secret]);
    expect(redactor.redact(`key=${secret}; url=https://x.test/?k=${encodeURIComponent(secret)}&n=1`)).toBe(
      `key=${redactionMarker}; url=https://x.test/?k=${redactionMarker}&n=1`,
    );
  });

  it('hides its base64 at every alignment inside a longer base64 text, keeping only the characters that carry other bytes', () => {
    const redactor = new SecretRedactor([secret]);
    for (const [encode, name] of [[base64, 'base64'], [base64Url, 'base64url']] as const) {
      for (let before = 0; before < 6; before += 1) {
        for (let after = 0; after < 4; after += 1) {
          const bytes = Buffer.concat([Buffer.from('#'.repeat(before)), Buffer.from(secret), Buffer.from('%'.repeat(after))]);
          const encoded = encode(bytes);
          const redacted = redactor.redact(encoded);
          const at = redacted.indexOf(redactionMarker);
          expect(at, `${name}, ${before} bytes before`).toBe(Math.ceil((before * 4) / 3));
          const keptAfter = redacted.length - at - redactionMarker.length;
          expect(keptAfter, `${name}, ${before} bytes before, ${after} after`).toBe(encoded.length - Math.floor(((before + secret.length) * 4) / 3));
        }
      }
    }
    expect(base64(Buffer.from(secret))).not.toBe(base64Url(Buffer.from(secret)));
  });

  it('hides overlapping secrets, and a secret inside another, as one span', () => {
    const redactor = new SecretRedactor(['alpha-beta-gamma-1', 'gamma-1-delta-epsilon', 'beta-gam']);
    expect(redactor.redact('x alpha-beta-gamma-1-delta-epsilon y')).toBe(`x ${redactionMarker} y`);
    expect(redactor.redact('x beta-gamma-1-delta-epsilon y')).toBe(`x ${redactionMarker} y`);
    expect(redactor.redact('x beta-gam y')).toBe(`x ${redactionMarker} y`);
  });

  it('ignores values shorter than 8 characters', () => {
    expect(new SecretRedactor(['1234567', '']).active).toBe(false);
    expect(new SecretRedactor(['1234567']).redact('pin 1234567')).toBe('pin 1234567');
  });

  it('redacts keys and values in nested data, returning unchanged data as it was', () => {
    const redactor = new SecretRedactor([secret]);
    const clean = { a: [1, { b: 'text' }], c: null };
    expect(redactor.redactValue(clean)).toBe(clean);
    const dirty = { list: [`x ${secret}`, 2], nested: { [secret]: true, when: new Date(0) } };
    expect(redactor.redactValue(dirty)).toEqual({ list: [`x ${redactionMarker}`, 2], nested: { [redactionMarker]: true, when: new Date(0) } });
    expect(dirty.list[0]).toBe(`x ${secret}`);
  });

  it('holds back a streamed tail that may begin a secret, wherever the text is split', () => {
    const redactor = new SecretRedactor([secret, 'other-secret-value']);
    const text = `one ${secret} two other-secret-value three ${secret}`;
    const expected = redactor.redact(text);
    for (let split = 0; split <= text.length; split += 1) {
      for (const second of [split, Math.min(text.length, split + 7)]) {
        const stream = redactor.stream();
        const shown = stream.push(text.slice(0, split)) + stream.push(text.slice(split, second)) + stream.push(text.slice(second)) + stream.end();
        expect(shown, `split at ${split} and ${second}`).toBe(expected);
      }
    }
  });

  it('redacts a text it has seen before as the first time, whatever came between', () => {
    const redactor = new SecretRedactor([secret]);
    const texts = Array.from({ length: 40 }, (_, index) => `${'output line\n'.repeat(30 + index)}${index % 3 === 0 ? secret : 'nothing secret'} ${index}`);
    const first = texts.map((text) => redactor.redact(text));
    for (const [index, redacted] of first.entries()) expect(redacted.includes(secret), `text ${index}`).toBe(false);
    // Again, in another order and as equal strings made afresh: the same result for each.
    for (const index of [39, 0, 38, 1, 20, 0, 39]) expect(redactor.redact(texts[index]!.slice(0))).toBe(first[index]);
    expect(redactor.redact(`${texts[3]}${secret}`)).toBe(`${first[3]}${redactionMarker}`);
  });

  it('redacts a megabyte of text quickly', () => {
    const secrets = Array.from({ length: 20 }, (_, index) => `secret-${index}-${'q'.repeat(20 + index)}`);
    const redactor = new SecretRedactor(secrets);
    const text = `${'lorem ipsum dolor sit amet, '.repeat(18_000)}${secrets[7]}${base64(Buffer.from('z'.repeat(250_000)))}`;
    expect(text.length).toBeGreaterThan(800_000);
    const started = performance.now();
    const redacted = redactor.redact(text);
    // Generous: about 10 ms here; the bound only catches a search that became quadratic.
    expect(performance.now() - started).toBeLessThan(1000);
    expect(redacted.split(redactionMarker)).toHaveLength(2);
  });
});

describe('the progress reporter', () => {
  it('never shows a secret streamed in pieces, nor in its lines', () => {
    const secret = 'sk-progress-0123456789';
    let written = '';
    const reporter = createProgressReporter({ write: (text) => (written += text), color: false, maxSteps: 5, liveText: true, redactor: new SecretRedactor([secret]) });
    for (const piece of ['The key is sk-pro', 'gress-01234', '56789, kept.']) reporter.onTextDelta!(piece);
    reporter.onEvent('model-response', { step: 1, content: '', toolCalls: [] });
    reporter.onEvent('tool-call-end', { step: 1, isError: false, content: `found ${secret}` });
    expect(written).toBe(`The key is ${redactionMarker}, kept.\n  ok found ${redactionMarker}\n`);
  });
});

describe('literal secrets in YAML', () => {
  it('recognises credential headers by name, scheme or token prefix', () => {
    expect(isSecretHeader('Authorization', 'anything')).toBe(true);
    expect(isSecretHeader('X-Api-Key', 'abc')).toBe(true);
    expect(isSecretHeader('X-Custom', 'Bearer abcdefgh')).toBe(true);
    expect(isSecretHeader('X-Custom', 'sk-abcdefgh12345')).toBe(true);
    expect(isSecretHeader('X-Title', 'manus-runtime')).toBe(false);
    expect(isSecretHeader('Authorization', '  ')).toBe(false);
  });

  it('warns at the value, masked, naming the headers_env form', () => {
    const text = 'version: 1\nllm:\n  default:\n    headers:\n      Authorization: Bearer sk-literal-abcdefgh\n';
    const { source } = parseYamlText('agents.yaml', text);
    const [warning] = literalSecretHeaders('default', { Authorization: 'Bearer sk-literal-abcdefgh' }, source!);
    expect(warning).toMatchObject({ severity: 'warning', code: 'literal_secret', location: { file: 'agents.yaml', line: 5, column: 22 } });
    expect(warning.message).toContain('Bearer ****');
    expect(warning.message).toContain('headers_env: { Authorization: AUTHORIZATION }');
    expect(warning.message).not.toContain('sk-literal');
  });
});

/** A plugin that hands the model the whole environment, in plain text, base64, base64url and URL-encoded. */
const leakingPlugin = `import { defineTool } from 'manus-runtime';

export default defineTool({
  name: 'leak_environment',
  description: 'Returns the environment in several encodings.',
  parameters: { type: 'object', properties: {} },
  execute() {
    const environment = JSON.stringify(process.env);
    return [
      'plain: ' + environment,
      'base64: ' + Buffer.from(environment).toString('base64'),
      'base64 shifted: ' + Buffer.from('+' + environment).toString('base64'),
      'base64 shifted twice: ' + Buffer.from('++' + environment).toString('base64'),
      'base64url: ' + Buffer.from(environment).toString('base64url'),
      'url: ' + encodeURIComponent(environment),
    ].join('\\n');
  },
});
`;

describe('a run whose tool reads the key', () => {
  it('shows the key in no output, no file and no request to the model', async () => {
    const secret = 'sk-test+4f7a/9c2e=b81d?key';
    const fixture = makeFixture({
      'recipe.yaml': 'version: 1\nname: leak\nplugins: [./tools]\nagent:\n  system_prompt: You are a test agent.\n  tools: [leak_environment, terminate]\n',
      'tools/leak.ts': leakingPlugin,
    });
    const server = await startScriptedModelServer({
      turns: [
        { content: `Reading, with ${secret} in mind.`, toolCalls: [{ name: 'leak_environment', arguments: {} }] },
        { content: `The key is ${secret} (${encodeURIComponent(secret)}, ${base64(Buffer.from(secret))}).` },
      ],
    });
    try {
      const environment = { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: secret, MANUS_MODEL: 'scripted-model' };
      const run = await runCli(
        ['run', 'recipe.yaml', '--prompt', `Use ${secret} carefully.`, '--record', 'recording.jsonl', '--report', 'reports', '--runs-dir', 'runs', '--ci'],
        { cwd: fixture, env: environment },
      );
      expect(run.stderr).toContain('leak_environment');
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toContain(`The key is ${redactionMarker}`);
      const [runId] = readdirSync(join(fixture, 'runs'));
      const events = readFileSync(join(fixture, 'runs', runId, 'events.jsonl'), 'utf8');
      expect(events).toContain(redactionMarker);
      const shown = await runCli(['runs', 'show', runId, '--full', '--runs-dir', 'runs'], { cwd: fixture, env: environment });
      expect(shown.stdout).toContain(redactionMarker);
      const shownJson = await runCli(['runs', 'show', runId, '--json', '--runs-dir', 'runs'], { cwd: fixture, env: environment });
      const requests = server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
      expect(requests).toHaveLength(2);
      expect(JSON.stringify(requests[1].body)).toContain(redactionMarker);
      const sinks: Record<string, string> = {
        stdout: run.stdout,
        stderr: run.stderr,
        'events.jsonl': events,
        'the recording': readFileSync(join(fixture, 'recording.jsonl'), 'utf8'),
        'manus-report.json': readFileSync(join(fixture, 'reports', 'manus-report.json'), 'utf8'),
        'manus-junit.xml': readFileSync(join(fixture, 'reports', 'manus-junit.xml'), 'utf8'),
        'runs show --full': shown.stdout + shown.stderr,
        'runs show --json': shownJson.stdout,
        'the first request': JSON.stringify(requests[0].body),
        'the request after the tool result': JSON.stringify(requests[1].body),
      };
      for (const [where, text] of Object.entries(sinks)) expectNoLeak(text, secret, where);
    } finally {
      await server.close();
    }
  });
});

describe('literal secrets in a profile', () => {
  const literal = 'Bearer sk-literal-0123456789';
  const agentsYaml = `version: 1\nllm:\n  default:\n    retry: { base_delay_ms: 5 }\n    headers:\n      Authorization: ${literal}\n`;

  it('are a warning with their location, and the run goes on', async () => {
    const run = await runScripted([terminate('fine')], { agentsYaml });
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toMatch(/agents\.yaml:6:22: warning: model profile 'default' writes a secret into the header 'Authorization' \(Bearer \*\*\*\*\)/);
    expect(run.stderr).toContain('headers_env');
    expect(run.stderr).not.toContain('sk-literal');
    expect(run.requests).toHaveLength(1);
  });

  it('stop a CI run before any request, with exit 2', async () => {
    const withFlag = await runScripted([terminate('fine')], { agentsYaml, args: ['--ci'] });
    const withVariable = await runScripted([terminate('fine')], { agentsYaml, env: { CI: 'true' } });
    for (const run of [withFlag, withVariable]) {
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toMatch(/agents\.yaml:6:22: error: .*CI mode does not run with a literal secret/);
      expect(run.stderr).not.toContain('sk-literal');
      expect(run.requests).toHaveLength(0);
    }
  });

  it('as api_key are refused, pointing to api_key_env', async () => {
    const fixture = makeFixture({ 'agents.yaml': 'version: 1\nllm:\n  default:\n    api_key: sk-in-yaml-0123456789\n' });
    const result = await runCli(['validate', 'agents.yaml'], { cwd: fixture });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("agents.yaml:4:5: error: unknown key 'api_key' in 'llm.default'");
    expect(result.stderr).toContain('api_key_env');
    expect(result.stderr).not.toContain('sk-in-yaml');
  });
});

describe('headers_env', () => {
  const header = 'gateway-credential-0123456789';

  it('sends the header from the environment and hides its value everywhere', async () => {
    const fixture = writeLoopFixture({ profile: 'retry: { base_delay_ms: 5 }\nheaders_env: { X-Gateway-Credential: GATEWAY_HEADER_VALUE }' });
    const run = await runScripted(
      [{ content: 'Reading.', toolCalls: [{ name: 'read_env', arguments: { name: 'GATEWAY_HEADER_VALUE' } }] }, terminate(`header ${header}`)],
      { fixture, env: { GATEWAY_HEADER_VALUE: header }, args: ['--report', 'reports'] },
    );
    expect(run.exitCode).toBe(0);
    expect(run.requests).toHaveLength(2);
    for (const request of run.requests) expect(request.headers['x-gateway-credential']).toBe(header);
    expect(run.json.answer).toBe(`header ${redactionMarker}`);
    const toolResult = (run.requests[1].body.messages as Array<{ role: string; content: string }>).find((message) => message.role === 'tool');
    expect(toolResult?.content).toBe(`value=${redactionMarker}`);
    const events = readFileSync(join(run.json.runDirectory, 'events.jsonl'), 'utf8');
    for (const [where, text] of Object.entries({
      stdout: run.stdout,
      stderr: run.stderr,
      'events.jsonl': events,
      'manus-report.json': readFileSync(join(fixture, 'reports', 'manus-report.json'), 'utf8'),
      requests: JSON.stringify(run.requests.map((request) => request.body)),
    })) expectNoLeak(text, header, where);
  });

  it('lists a missing header variable with the other missing variables', async () => {
    const fixture = writeLoopFixture({ profile: 'api_key_env: MISSING_LLM_KEY\nheaders_env: { X-Gateway-Credential: MISSING_GATEWAY_VALUE }' });
    const run = await runScripted([terminate()], { fixture });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('needs environment variables that are not set: MISSING_LLM_KEY, MISSING_GATEWAY_VALUE');
    expect(run.requests).toHaveLength(0);
  });
});
