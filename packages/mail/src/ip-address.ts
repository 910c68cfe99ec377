/**
 * Whether an IP address (dotted IPv4, or IPv6) is a private, loopback, link-local, carrier-grade
 * NAT or "this network" address: one of a private network's own hosts, not a place on the internet.
 * The evidence skips such hops to find the sending host; the URL analyzers do not count a link to
 * one as a lure.
 */
export function isPrivateIp(ip: string): boolean {
  if (ip.includes(':')) {
    const l = ip.toLowerCase();
    return l === '::1' || l.startsWith('fe80') || l.startsWith('fc') || l.startsWith('fd');
  }
  const [a = 0, b = 0] = ip.split('.').map(Number);
  return (
    a === 10 ||
    a === 127 ||
    a === 0 ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 169 && b === 254) ||
    (a === 100 && b >= 64 && b <= 127)
  );
}
