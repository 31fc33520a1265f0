/**
 * What a tool's context offers for reaching the network on the model's behalf (`context.network`),
 * bound to what the user allows. services/network/tool-network.ts makes it.
 */
import type { EgressAccess } from './egress.js';

/** A fetch as the runtime's own connections use it. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface ToolNetwork {
  /** The user allows loopback, private, link-local and metadata addresses (`network.allow_private`). */
  readonly allowPrivate: boolean;
  /**
   * A fetch whose connections refuse private addresses unless allowed: IP literals before sending,
   * names as they are resolved for the connection (so a second DNS answer cannot differ from the
   * one checked), and the same for every redirect. A refusal fails with code `network_private_address`.
   * Bodies stay streams, for the caller to cap.
   */
  fetch: FetchFunction;
  /**
   * Refuses a host that is, or resolves to, a private address; for clients that resolve names
   * themselves. With `egress`, a host the list does not name is refused before any lookup.
   */
  checkHost(hostname: string): Promise<void>;
  /**
   * Set when the run may reach only named hosts (`sandbox.network: {allow: [...]}` or the user's
   * `network.only`): `fetch` then
   * refuses any other host (code `network_host_not_allowed`), and clients that cannot use it, such
   * as the browser, go through the egress proxy.
   */
  readonly egress?: EgressAccess;
  /**
   * Set when the user's own config holds every connection to named hosts (`network.only`): the
   * fetch for the user's own MCP servers and A2A agents, which reach any address the user gave
   * them, private ones included, but only hosts on that list. Absent, they use the plain fetch.
   */
  readonly userFetch?: FetchFunction;
}
