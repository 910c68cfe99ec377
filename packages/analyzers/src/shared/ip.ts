/**
 * Whether an IP literal (as a URL host: dotted IPv4, or IPv6 without brackets) names an address
 * no one outside a private network can reach: RFC 1918, loopback, link-local, carrier-grade NAT,
 * "this network" (0/8), multicast and reserved space, a network address (a.0.0.0), and their IPv6
 * counterparts (::1, ::, fe80::/10, fc00::/7). A phishing page has to be reachable by its victims,
 * so a link to such an address is a technical note (a device's address on a lab network, an
 * address a mail client made into a link), not a lure.
 */
export function isNonRoutableIp(host: string): boolean {
  if (host.includes(':')) {
    const h = host.toLowerCase();
    return (
      h === '::1' ||
      h === '::' ||
      h.startsWith('fe8') ||
      h.startsWith('fe9') ||
      h.startsWith('fea') ||
      h.startsWith('feb') ||
      h.startsWith('fc') ||
      h.startsWith('fd')
    );
  }
  const parts = host.split('.');
  if (parts.length !== 4) return false;
  const o = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : Number.NaN));
  const [a = Number.NaN, b = Number.NaN, c = Number.NaN, d = Number.NaN] = o;
  if (![a, b, c, d].every((x) => x >= 0 && x <= 255)) return false;
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    a >= 224 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (b === 0 && c === 0 && d === 0)
  );
}
