/**
 * `manus a2a serve`: recipes served to A2A clients over JSON-RPC, built on the official SDK. The
 * agent card is at `/.well-known/agent-card.json`, the endpoint at `/a2a/jsonrpc`. Every request
 * passes the same guard as `manus mcp serve` (Host, Origin, and beyond loopback the bearer token)
 * before the SDK sees it. Recipes are resolved before the server starts, so a broken one is a
 * usage error rather than a task that fails later.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AGENT_CARD_PATH, type AgentCard } from '@a2a-js/sdk';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import { ConfigError, UsageError } from '../../contract/errors.js';
import { locateRecipe } from '../../features/packs/locate-recipe.js';
import { resolveRecipe } from '../../runs/recipe/resolve-recipe.js';
import { createRequestGuard } from '../mcp-server/http-request-guard.js';
import { listen, requireTokenBeyondLoopback, type HttpServeSettings } from '../mcp-server/http-serving.js';
import { agentCard, type ServedRecipe } from './agent-card.js';
import { RecipeExecutor } from './recipe-executor.js';

export const a2aPath = '/a2a/jsonrpc';

export interface A2aServeOptions extends HttpServeSettings {
  cwd: string;
  environment: Record<string, string | undefined>;
  /** Recipe files, each served as one skill. */
  recipes: string[];
  /** Host names requests may name besides the bound host; the first is the card's when bound to every address. */
  allowedHosts: string[];
}

export interface A2aServing {
  /** Where the agent card is. */
  cardUrl: string;
  /** The JSON-RPC endpoint. */
  url: string;
  /** Stops serving: running tasks are cancelled, their runs end as interrupted. */
  close(): Promise<void>;
}

export async function startA2aServer(options: A2aServeOptions): Promise<A2aServing> {
  if (options.recipes.length === 0) throw new UsageError('nothing to serve: name recipes with --recipe file');
  requireTokenBeyondLoopback(options);
  const served = await servedRecipes(options);
  const guard = createRequestGuard({ host: options.host, allowedHosts: options.allowedHosts, token: options.token });
  const server = createServer();
  const address = await listen(server, options.port, options.host);
  const origin = `http://${cardHost(options, address)}:${address.port}`;
  const card: AgentCard = agentCard(served, { url: `${origin}${a2aPath}`, version: options.version, bearer: options.token !== undefined });
  const executor = new RecipeExecutor(served, { cwd: options.cwd, environment: options.environment, runsDirectory: options.runsDirectory, trust: options.trust, sandbox: options.sandbox });
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);

  const app = express();
  app.disable('x-powered-by');
  app.use((request, response, next) => {
    const verdict = guard(request.headers);
    if (verdict.allowed) return next();
    if (verdict.status === 401) response.setHeader('WWW-Authenticate', 'Bearer');
    response.status(verdict.status).json({ error: verdict.message });
  });
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: async () => card, cache: { maxAge: 0 } }));
  app.use(a2aPath, jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  server.on('request', (request: IncomingMessage, response: ServerResponse) => app(request, response));

  return {
    cardUrl: `${origin}/${AGENT_CARD_PATH}`,
    url: `${origin}${a2aPath}`,
    async close() {
      await executor.stopAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The host the card names: the bound one, or, bound to every address, the first allowed name or loopback. */
function cardHost(options: A2aServeOptions, address: AddressInfo): string {
  const wildcard = address.address === '0.0.0.0' || address.address === '::';
  if (wildcard) return options.allowedHosts[0] ?? '127.0.0.1';
  return address.family === 'IPv6' ? `[${address.address}]` : address.address;
}

async function servedRecipes(options: A2aServeOptions): Promise<ServedRecipe[]> {
  const served: ServedRecipe[] = [];
  for (const file of options.recipes) {
    const plan = await resolveRecipe(locateRecipe(file, options.cwd).file, {
      cwd: options.cwd,
      environment: options.environment,
      overrides: { trust: options.trust, sandbox: options.sandbox },
      strictParameters: false,
    });
    const id = skillId(plan.recipe.name);
    if (served.some((each) => each.id === id)) {
      throw new ConfigError([{ severity: 'error', message: `two served recipes are named '${id}': give each a distinct name`, location: { file: plan.recipe.file } }]);
    }
    served.push({ id, recipe: plan.recipe });
  }
  return served;
}

/** A recipe's name as a skill id: the characters tool names allow, at most 64 of them. */
function skillId(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'recipe';
}
