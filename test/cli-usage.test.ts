import { describe, expect, it } from 'vitest';
import { makeFixture, runCli } from './support/run-cli.js';

const commands = ['run', 'resume', 'replay', 'runs', 'validate', 'tools', 'agents'];

describe('usage errors', () => {
  it('print the error and one line pointing at the command\'s own help, not the whole help', async () => {
    const cwd = makeFixture({});
    const missing = await runCli(['run'], { cwd });
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toBe("error: missing required argument 'recipe'\nsee `manus run --help`\n");
    const invalid = await runCli(['resume', 'some-run', '--max-steps', 'many'], { cwd });
    expect(invalid.exitCode).toBe(2);
    expect(invalid.stderr).toBe("error: option '--max-steps <n>' argument 'many' is invalid. expected a whole number of at least 1\nsee `manus resume --help`\n");
    const unknown = await runCli(['tools', '--plugin', 'x'], { cwd });
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toMatch(/^error: unknown option '--plugin'.*\nsee `manus tools --help`\n$/s);
    const command = await runCli(['rnu'], { cwd });
    expect(command.exitCode).toBe(2);
    expect(command.stderr).toContain('see `manus --help`');
    expect(command.stderr).not.toContain('Usage:');
  });
});

describe('--help', () => {
  it('gives each command examples and exit codes, and shows no empty default for repeatable options', async () => {
    const cwd = makeFixture({});
    for (const command of commands) {
      const help = await runCli([command, '--help'], { cwd });
      expect(help.exitCode).toBe(0);
      expect(help.stdout).toContain(`Usage: manus ${command}`);
      expect(help.stdout).toContain(`Examples:\n  manus ${command}`);
      expect(help.stdout).toContain('Exit codes:\n  0    success');
      expect(help.stdout).not.toContain('(default: [])');
    }
  });

  it('names the environment variables a run reads, and what exit code 5 means', async () => {
    const help = await runCli(['run', '--help'], { cwd: makeFixture({}) });
    for (const variable of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'MANUS_MODEL', 'OLLAMA_HOST', 'MANUS_RUNS_DIR', 'MANUS_CHROMIUM_PATH', 'MANUS_CACHE_DIR', 'XDG_CONFIG_HOME', 'CI=true']) {
      expect(help.stdout).toContain(`\n  ${variable}`);
    }
    expect(help.stdout).toMatch(/\n {2}5 {4}a permission was denied[^]*needs-input: continue with manus resume <run> --approve <call>, or --answer TEXT/);
    // The repeatable options keep their names and say so.
    for (const option of ['--param <key=value>', '--answer <text>', '--trust <grants>', '--workspace-from <folder>']) expect(help.stdout).toContain(option);
  });
});

describe('--help of every command', () => {
  const everyCommand = [...commands, 'view', 'inspect', 'packs', 'pack', 'pack init', 'mcp', 'mcp serve', 'mcp list', 'batch', 'worker', 'doctor'];

  it('lists exit code 6 wherever a run can end with it', async () => {
    const cwd = makeFixture({});
    for (const command of ['run', 'resume', 'replay']) {
      const help = await runCli([command, '--help'], { cwd });
      expect(help.stdout, command).toMatch(/\n {2}6 {4}a required MCP server/);
    }
  });

  it('prints an Environment heading only above the variables it names', async () => {
    const cwd = makeFixture({});
    for (const command of everyCommand) {
      const help = await runCli([...command.split(' '), '--help'], { cwd });
      expect(help.exitCode, command).toBe(0);
      for (const match of help.stdout.matchAll(/^Environment:\n(.*)$/gm)) {
        expect(match[1], `${command}: the line under Environment:`).toMatch(/^ {2}[A-Z][A-Z0-9_]*[ =,]/);
      }
      expect(help.stdout, command).not.toMatch(/variables above/);
    }
  });
});

describe('manus validate --json', () => {
  it('prints the diagnostics with severity, message and place, and their counts', async () => {
    const cwd = makeFixture({
      'agents.yaml': 'version: 1\nagents:\n  helper:\n    description: Helps.\n    max_step: 5\n',
      'good.yaml': 'version: 1\nname: good\nprompt: Hi\nagent: assistant\n',
    });
    const result = await runCli(['validate', 'agents.yaml', 'good.yaml', '--json'], { cwd });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe('');
    expect(result.json).toEqual({
      files: 2,
      errors: 1,
      warnings: 0,
      notes: 0,
      diagnostics: [{ severity: 'error', message: "unknown key 'max_step' in 'agents.helper' (did you mean 'max_steps'?)", file: 'agents.yaml', line: 5, column: 5 }],
    });
    const clean = await runCli(['validate', 'good.yaml', '--json'], { cwd: makeFixture({ 'good.yaml': 'version: 1\nname: good\nprompt: Hi\nagent: assistant\n' }) });
    expect(clean.stderr).toBe('');
    expect(clean.exitCode).toBe(0);
    expect(clean.json).toEqual({ files: 1, errors: 0, warnings: 0, notes: 0, diagnostics: [] });
  });
});
