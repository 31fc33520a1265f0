/**
 * The one egress policy of a run that may reach only named hosts: sandboxed commands (through the
 * proxy), web tools and MCP clients (through the fetch), and the browser (through the proxy's
 * loopback port) all ask it, so a host is allowed or refused the same way wherever the
 * connection starts. The name is checked against the list before anything resolves it; the
 * proxy then resolves it here and refuses private addresses unless the user allows them. The
 * proxy itself is loaded only when something first needs it.
 */
import type { LookupAddress } from 'node:dns';
import type { ConnectionRefusal, EgressAccess, EgressCommandWatch, EgressProxyEndpoints } from '../../contract/egress.js';
import type { RunResources } from '../../contract/tool.js';
import { resolveCheckedHost, type NetworkAccess } from './guarded-lookup.js';
import { hostPatternMatches, normalizeHost, parseHostPattern, type HostPattern } from './host-patterns.js';
import { HostNotAllowedError, PrivateAddressError } from './network-errors.js';

export interface EgressPolicyOptions {
  /** The allowlist, as `sandbox.network.allow` writes it (already checked). */
  hosts: readonly string[];
  access: NetworkAccess;
  resources: RunResources;
  /** Records a refusal (the run's `connection-refused` event). */
  onRefused(refusal: ConnectionRefusal): void;
  /** The tool call in whose course the code now running was started, when there is one. */
  currentCall?(): { tool: string; callId: string } | undefined;
}

const defaultPorts: Record<string, number> = { 'http:': 80, 'https:': 443, 'ws:': 80, 'wss:': 443 };

export class EgressPolicy implements EgressAccess {
  readonly hosts: readonly string[];
  readonly access: NetworkAccess;
  private readonly patterns: HostPattern[];
  private readonly watches = new Set<{ command: string; tool?: string; callId?: string; seen: ConnectionRefusal[] }>();

  constructor(private readonly options: EgressPolicyOptions) {
    this.hosts = [...options.hosts];
    this.access = { allowPrivate: options.access.allowPrivate };
    this.patterns = options.hosts.map(parseHostPattern).filter((pattern): pattern is HostPattern => !('problem' in pattern));
  }

  /** Whether the list names this host and port; nothing is resolved. */
  allows(host: string, port: number): boolean {
    return this.patterns.some((pattern) => hostPatternMatches(pattern, host, port));
  }

  /** The host's addresses, all checked; a private one is refused (and recorded) unless the user allows it. */
  async resolve(host: string, port: number, via: ConnectionRefusal['via']): Promise<LookupAddress[]> {
    try {
      return await resolveCheckedHost(host, this.access);
    } catch (error) {
      if (PrivateAddressError.isInstance(error)) this.refuse({ host, port, via, reason: 'private-address', detail: error.address });
      throw error;
    }
  }

  /** Records a refused connection and says what would allow it. */
  refuse(attempt: { host: string; port: number; via: ConnectionRefusal['via']; reason: ConnectionRefusal['reason']; detail?: string }): ConnectionRefusal {
    const host = normalizeHost(attempt.host);
    const watch = attempt.via === 'sandbox' ? [...this.watches].at(-1) : undefined;
    const call = watch ?? this.options.currentCall?.();
    const refusal: ConnectionRefusal = {
      host,
      port: attempt.port,
      reason: attempt.reason,
      via: attempt.via,
      ...(call?.tool ? { tool: call.tool, callId: call.callId } : {}),
      ...(watch ? { command: watch.command } : {}),
      message: refusalMessage(host, attempt.port, attempt.reason, attempt.detail),
    };
    for (const each of this.watches) each.seen.push(refusal);
    this.options.onRefused(refusal);
    return refusal;
  }

  /** For fetches: refuses a URL whose host and port the list does not name, before anything is sent. */
  checkUrl(url: URL): void {
    const port = url.port === '' ? (defaultPorts[url.protocol] ?? 0) : Number(url.port);
    if (this.allows(url.hostname, port)) return;
    const refusal = this.refuse({ host: url.hostname, port, via: 'fetch', reason: 'not-listed' });
    throw new HostNotAllowedError(refusal.host, port, refusal.message);
  }

  proxy(): Promise<EgressProxyEndpoints> {
    return this.options.resources.get(
      'egress-proxy',
      // Loaded only here: a run without an allowlist never loads the proxy libraries.
      async () => (await import('./egress-proxy.js')).startEgressProxy(this),
      (proxy) => proxy.close(),
    );
  }

  watchCommand(command: string): EgressCommandWatch {
    const call = this.options.currentCall?.();
    const watch = { command, tool: call?.tool, callId: call?.callId, seen: [] as ConnectionRefusal[] };
    this.watches.add(watch);
    return { refusals: () => [...watch.seen], end: () => this.watches.delete(watch) };
  }
}

function refusalMessage(host: string, port: number, reason: ConnectionRefusal['reason'], address: string | undefined): string {
  const target = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (reason === 'private-address') {
    return `connection to ${target} refused: it resolves to the private address ${address ?? host}, which only network.allow_private: true in your own configuration allows`;
  }
  return `connection to ${target} refused: ${host} is not in the run's allowed hosts; list it in sandbox.network.allow and run with --trust hosts (or list it under network.allow in your own configuration)`;
}
