/**
 * Where the layer may relay a caller's own callback. The caller chooses the URL, and the layer
 * POSTs to it from inside the deployment's network, so without a check anyone could make the layer
 * call its own loopback, the private network or a cloud metadata endpoint (SSRF). Refused:
 * loopback, private (RFC 1918), carrier-grade NAT, link-local, unique-local, site-local,
 * unspecified, multicast and reserved addresses, IPv4 and IPv6 (IPv4-mapped IPv6 addresses count as
 * their IPv4 address).
 *
 * Checked twice: IP literals when the mutation is validated (`BAD_USER_INPUT` before any paid
 * call), and every relay just before delivery, after resolving the host name. The second check has
 * a small DNS-rebinding window (the delivery resolves the name again); `guardedRelayAgent` closes it
 * by checking the address actually connected to, once the delivery accepts a dispatcher.
 *
 * `<AREA>_RELAY_ALLOW_PRIVATE=1` (e.g. `RISK_RELAY_ALLOW_PRIVATE=1`) switches the check off: for development and tests, whose callback
 * receivers listen on 127.0.0.1, or a deployment whose callers live on the same private network.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { lookup as dnsLookupAll } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { areaSetting, type Settings } from '../../../platform/settings.ts';

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata endpoints)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback, IPv4-compatible (deprecated)
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv6');
}

const bare = (host: string): string => host.replace(/^\[|\]$/g, '').replace(/%.*$/, '');

/** True for an IP address (v4 or v6, brackets and zone id allowed) that must not be relayed to. */
export function isPrivateAddress(address: string): boolean {
  const a = bare(address);
  const v = isIP(a);
  if (v === 0) return false;
  return BLOCKED.check(a, v === 4 ? 'ipv4' : 'ipv6');
}

/** True when `<AREA>_RELAY_ALLOW_PRIVATE` (e.g. `RISK_RELAY_ALLOW_PRIVATE`) is `1` (or `true`): relays may go to private addresses. */
export const allowPrivateRelay = (settings: Settings, area: string): boolean => areaSetting(settings, area, 'RELAY_ALLOW_PRIVATE');

/** The URL's host when it is a private IP literal (after WHATWG normalisation: `0x7f000001` is 127.0.0.1), else null. */
export function privateLiteralHost(url: string): string | null {
  let host: string;
  try {
    host = bare(new URL(url).hostname);
  } catch {
    return null;
  }
  return isIP(host) !== 0 && isPrivateAddress(host) ? host : null;
}

/**
 * Why the layer must not relay to `url` (its host is, or resolves to, a private address, or does not
 * resolve), or null when it may. Resolves the name now: the delivery resolves it again.
 */
export async function relayRefusal(url: string): Promise<string | null> {
  let host: string;
  try {
    host = bare(new URL(url).hostname);
  } catch {
    return 'not a URL';
  }
  if (isIP(host) !== 0) return isPrivateAddress(host) ? `${host} is a private address` : null;
  let addresses: LookupAddress[];
  try {
    addresses = await dnsLookupAll(host, { all: true, verbatim: true });
  } catch {
    return `${host} does not resolve`;
  }
  const bad = addresses.find((a) => isPrivateAddress(a.address));
  if (bad) return `${host} resolves to the private address ${bad.address}`;
  return addresses.length === 0 ? `${host} does not resolve` : null;
}

class PrivateAddressError extends Error {
  readonly code = 'ERR_RELAY_PRIVATE_ADDRESS';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `net.connect` lookup that fails when the name resolves to any private address. */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) {
      callback(err, '', 0);
      return;
    }
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad || addresses.length === 0) {
      callback(new PrivateAddressError(bad ? `refused: ${hostname} resolves to the private address ${bad.address}` : `${hostname} does not resolve`), '', 0);
      return;
    }
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  });
}

/**
 * An undici dispatcher that refuses, at connection time, hosts that are or resolve to private
 * addresses: the address checked is the address connected to, so DNS rebinding cannot slip past.
 */
export function guardedRelayAgent(): Agent {
  const connector = buildConnector({ lookup: guardedLookup });
  return new Agent({
    connect: (opts, callback) => {
      const host = bare(opts.hostname);
      // net.connect skips the lookup for IP literals: check them here.
      if (isIP(host) !== 0 && isPrivateAddress(host)) {
        callback(new PrivateAddressError(`refused: ${host} is a private address`), null);
        return;
      }
      connector(opts, callback);
    },
  });
}
