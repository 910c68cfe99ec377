import { isPrivateIp } from '@trawl/mail';

/**
 * Whether an IP literal (as a URL host: dotted IPv4, or IPv6 without brackets) names an address no
 * one outside a private network can reach: the private ones of @trawl/mail's isPrivateIp, and also
 * multicast and reserved space, a network address (a.0.0.0), the rest of link-local IPv6 and `::`.
 * A phishing page has to be reachable by its victims, so a link to such an address is a technical
 * note (a device's address on a lab network, an address a mail client made into a link), not a lure.
 */
export function isNonRoutableIp(host: string): boolean {
  if (host.includes(':')) {
    const h = host.toLowerCase();
    return isPrivateIp(h) || h === '::' || /^fe[89ab]/.test(h);
  }
  const parts = host.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255))
    return false;
  const [a = 0, b = 0, c = 0, d = 0] = parts.map(Number);
  return isPrivateIp(host) || a >= 224 || (b === 0 && c === 0 && d === 0);
}
