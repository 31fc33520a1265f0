/**
 * The one egress policy of a run that may reach only named hosts (a sandbox's `network.allow`, the
 * user's `network.only`, or both, when a host must be on both lists): sandboxed commands (through the
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
  /** The allowlist, as `sandbox.network.allow` or the user's `network.only` writes it (already checked). */
  hosts: readonly string[];
  /** `access.only`, the user's `network.only`, holds every connection too: a host must be on both lists. */
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
  /** The user's `network.only`, when set: a ceiling no recipe's list lifts. */
  private readonly onlyPatterns: HostPattern[] | undefined;
  private readonly watches = new Set<{ command: string; tool?: string; callId?: string; seen: ConnectionRefusal[] }>();

  constructor(private readonly options: EgressPolicyOptions) {
    this.hosts = [...options.hosts];
    this.access = { allowPrivate: options.access.allowPrivate, ...(options.access.only ? { only: [...options.access.only] } : {}) };
    this.patterns = parsePatterns(options.hosts);
    this.onlyPatterns = options.access.only ? parsePatterns(options.access.only) : undefined;
  }

  /** Whether the list (and the user's `network.only`) names this host and port; nothing is resolved. */
  allows(host: string, port: number): boolean {
    return this.onlyAllows(host, port) && this.patterns.some((pattern) => hostPatternMatches(pattern, host, port));
  }

  /** Whether the lists name this host on some port; nothing is resolved. */
  namesHost(host: string): boolean {
    const named = (patterns: HostPattern[]) => patterns.some((pattern) => hostPatternMatches({ ...pattern, port: undefined }, host));
    return named(this.patterns) && (this.onlyPatterns === undefined || named(this.onlyPatterns));
  }

  /** Whether the user's `network.only` names this host and port (true when it is not set). */
  onlyAllows(host: string, port: number): boolean {
    return this.onlyPatterns?.some((pattern) => hostPatternMatches(pattern, host, port)) ?? true;
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
      message: refusalMessage(host, attempt.port, attempt.reason, attempt.detail, !this.onlyAllows(host, attempt.port)),
    };
    for (const each of this.watches) each.seen.push(refusal);
    this.options.onRefused(refusal);
    return refusal;
  }

  /** For fetches: refuses a URL whose host and port the list does not name, before anything is sent. */
  checkUrl(url: URL): void {
    this.checkUrlAgainst(url, (host, port) => this.allows(host, port));
  }

  /**
   * For the user's own MCP servers and A2A agents, which no recipe's list holds: refuses a URL
   * only when the user's `network.only` does not name its host and port.
   */
  checkUrlAgainstOnly(url: URL): void {
    this.checkUrlAgainst(url, (host, port) => this.onlyAllows(host, port));
  }

  private checkUrlAgainst(url: URL, allows: (host: string, port: number) => boolean): void {
    const port = url.port === '' ? (defaultPorts[url.protocol] ?? 0) : Number(url.port);
    if (allows(url.hostname, port)) return;
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

function parsePatterns(hosts: readonly string[]): HostPattern[] {
  return hosts.map(parseHostPattern).filter((pattern): pattern is HostPattern => !('problem' in pattern));
}

function refusalMessage(host: string, port: number, reason: ConnectionRefusal['reason'], address: string | undefined, offOnlyList: boolean): string {
  const target = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (reason === 'private-address') {
    return `connection to ${target} refused: it resolves to the private address ${address ?? host}, which only network.allow_private: true in your own configuration allows`;
  }
  if (offOnlyList) return `connection to ${target} refused: ${host} is not in network.only of your own configuration, which holds every connection of the run; add it there to allow it`;
  return `connection to ${target} refused: ${host} is not in the run's allowed hosts; list it in sandbox.network.allow and run with --trust hosts (or list it under network.allow in your own configuration)`;
}
