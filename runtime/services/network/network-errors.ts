/**
 * The refusal of a connection to a private address: a typed error with a stable code that the
 * web tools, the browser and the MCP client report in their own words.
 */
import { ManusError } from '../../contract/errors.js';

const privateAddressErrorMarker = 'manus.error.PrivateAddressError';
const privateAddressErrorSymbol = Symbol.for(privateAddressErrorMarker);

export class PrivateAddressError extends ManusError {
  private readonly [privateAddressErrorSymbol] = true;
  /** The host asked for, and the private address it is or resolved to. */
  readonly host: string;
  readonly address: string;

  constructor(host: string, address: string) {
    const what = host === address ? `${address} is a private address` : `${host} resolves to the private address ${address}`;
    super(
      'network_private_address',
      `${what} (loopback, private network, link-local or cloud metadata); it is refused unless the user sets network.allow_private: true in their own configuration.`,
    );
    this.host = host;
    this.address = address;
  }

  static isInstance(error: unknown): error is PrivateAddressError {
    return ManusError.hasMarker(error, privateAddressErrorMarker);
  }
}

const hostNotAllowedErrorMarker = 'manus.error.HostNotAllowedError';
const hostNotAllowedErrorSymbol = Symbol.for(hostNotAllowedErrorMarker);

/** The refusal of a host the run's egress allowlist does not name. */
export class HostNotAllowedError extends ManusError {
  private readonly [hostNotAllowedErrorSymbol] = true;
  readonly host: string;
  readonly port: number;

  constructor(host: string, port: number, message: string) {
    super('network_host_not_allowed', message);
    this.host = host;
    this.port = port;
  }

  static isInstance(error: unknown): error is HostNotAllowedError {
    return ManusError.hasMarker(error, hostNotAllowedErrorMarker);
  }
}
