/**
 * A run that may reach only named hosts (`sandbox.network: {allow: [...]}`): what its sandbox, its
 * web tools and its browser need of the one egress policy that holds them all to the list.
 * services/network/egress-policy.ts makes it.
 */

/** One connection the policy refused. */
export interface ConnectionRefusal {
  host: string;
  port: number;
  /** `not-listed`: the allowlist does not name the host; `private-address`: it resolves to one the user does not allow. */
  reason: 'not-listed' | 'private-address';
  /** Which part of the run asked: `sandbox`, `browser`, `fetch` (web tools and MCP clients). */
  via: 'sandbox' | 'browser' | 'fetch';
  /** The tool call that asked, when known. */
  tool?: string;
  callId?: string;
  /** The sandboxed command that was running, when one was. */
  command?: string;
  /** What to change to allow it, for the person reading. */
  message: string;
}

/** The proxy the sandbox's commands reach through Unix sockets, and the browser through a loopback port. */
export interface EgressProxyEndpoints {
  /** HTTP proxy (CONNECT and plain requests), on a Unix socket in a folder only the runtime's user opens. */
  httpSocket: string;
  /** SOCKS5 proxy, on a Unix socket beside it. */
  socksSocket: string;
  /** An HTTP proxy on a loopback port with a credential of its own, for Chromium, which needs TCP. */
  browser(): Promise<{ server: string; username: string; password: string }>;
}

/** The refusals seen while one command ran. */
export interface EgressCommandWatch {
  refusals(): ConnectionRefusal[];
  end(): void;
}

export interface EgressAccess {
  /** The allowlist as written. */
  readonly hosts: readonly string[];
  /** Starts the proxy on first use; it stops when the run ends. */
  proxy(): Promise<EgressProxyEndpoints>;
  /** Collects the sandbox's refusals from now until `end`, naming `command` in their events. */
  watchCommand(command: string): EgressCommandWatch;
}

/** The ports the bridge listens on inside a sandbox, on its own loopback. */
export const egressBridgePorts = { http: 3128, socks: 1080 } as const;
