import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startUpModules } from '../bench/start-up-modules.js';
import { repositoryRoot } from './support/run-cli.js';

// What the built bundle evaluates when a plain `manus run` starts, from the metafile the build
// writes beside it: the features a run may never use load where they are used, not at start-up.
const modules = startUpModules(join(repositoryRoot, 'dist', 'bundle-metafile.json'));

const loadedOnUse: Array<[string, RegExp]> = [
  ['the batch runner and its queue', /^runtime\/applications\/batch\//],
  ['the HTML viewer and reports other than the JSON and JUnit ones', /^runtime\/applications\/(view\/|reports\/(run-html-report|batch-html-report|report-charts))/],
  ['evals', /^runtime\/applications\/eval\/|^cli\/eval-command/],
  ['the MCP server', /^runtime\/applications\/mcp-server\//],
  ['the MCP client', /^runtime\/features\/mcp\/(run-servers|server-connection|session-transport|server-requests|mcp-tools|tool-results)/],
  ['the A2A server and client', /^runtime\/applications\/a2a-server\/|^runtime\/features\/a2a\/a2a-client/],
  ['the OpenManus import', /^runtime\/applications\/openmanus-import\//],
  ['the doctor', /^runtime\/applications\/doctor\//],
  ['the egress proxy', /^runtime\/services\/network\/egress-proxy/],
  ['the price table', /^runtime\/services\/model\/(price-table|price-cache)/],
  ['the shell command rules, loaded for a command pattern or by validate', /^runtime\/services\/permissions\/(shell-command-|syntax-tree|shell-words|rule-diagnostics)/],
  ['the Docker and bubblewrap sandboxes', /^runtime\/services\/sandbox\/(docker|bwrap)-sandbox/],
  ['the built-in plugins (charts, browser, ...)', /^plugins\//],
  ['the other commands', /^cli\/(batch|eval|view|worker|import|packs|pack-init|replay|resume|runs|validate|inspect|list|doctor|mcp-list)-command/],
  ['the model SDK and the argument checker, loaded once the run is set up', /node_modules\/(openai|ajv|ajv-formats)\//],
];

describe('what a plain `manus run` evaluates at start-up', () => {
  it('is read from the metafile of the built bundle', () => {
    expect(modules, 'dist/bundle-metafile.json: run `npm run build`').toBeDefined();
    expect(modules!.count).toBeGreaterThan(50);
    expect(modules!.biggest.map((module) => module.path)).toContain('cli/run-command.ts');
  });

  it.each(loadedOnUse)('leaves out %s', (_feature, pattern) => {
    const included = modules!.biggest.filter((module) => pattern.test(module.path)).map((module) => `${module.path} (through ${module.importedBy})`);
    expect(included).toEqual([]);
  });
});
