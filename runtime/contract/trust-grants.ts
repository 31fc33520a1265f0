/**
 * The user's consent to what a recipe asks for but may not take on its own authority. Only the
 * user grants these: with `--trust` on the command line, or in their own configuration file.
 * A recipe, or an agents.yaml that ships beside one, can request a grant; it never holds one.
 */
import { UsageError } from './errors.js';
import { didYouMean } from './did-you-mean.js';

export const trustGrantNames = ['host', 'network', 'hosts', 'env', 'image', 'resources', 'workspace', 'browser', 'mcp', 'sampling', 'user'] as const;

export type TrustGrant = (typeof trustGrantNames)[number];

/** What each grant lets a recipe do, for messages that ask the user for it. */
export const trustGrantMeanings: Record<TrustGrant, string> = {
  host: 'run code on the host without a sandbox',
  network: 'give sandboxed code network access',
  hosts: 'let the run reach the hosts it names (sandboxed code through the runtime\'s proxy, web tools, the browser)',
  env: 'pass environment variables into the sandbox or to an MCP server it declares, or send a key to a model endpoint it chose',
  image: 'run code in another Docker image than the agent\'s',
  resources: 'raise the sandbox\'s memory, CPU or process limits',
  workspace: 'work in a folder outside the recipe\'s folder and the current folder',
  browser: 'choose the browser executable, its arguments or a browser to attach to',
  mcp: 'start the MCP servers it declares on the host, outside the sandbox',
  sampling: 'let MCP servers ask the run\'s model for completions, counted in the run\'s budgets',
  user: 'run sandboxed commands as a user it chose, with that user\'s access to the host\'s files',
};

/** Parses `--trust host,network` (or `all`); an unknown name is a usage error with a suggestion. */
export function parseTrustGrants(values: readonly string[]): Set<TrustGrant> {
  const grants = new Set<TrustGrant>();
  for (const value of values.flatMap((text) => text.split(','))) {
    const name = value.trim();
    if (name === '') continue;
    if (name === 'all') {
      for (const grant of trustGrantNames) grants.add(grant);
    } else if (isTrustGrant(name)) {
      grants.add(name);
    } else {
      throw new UsageError(`--trust: unknown grant '${name}'${didYouMean(name, [...trustGrantNames, 'all'])}; grants: ${trustGrantNames.join(', ')}, all`);
    }
  }
  return grants;
}

export function isTrustGrant(name: string): name is TrustGrant {
  return (trustGrantNames as readonly string[]).includes(name);
}
