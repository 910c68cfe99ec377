/**
 * "Hosts" made of Linux network namespaces (iproute2): each namespace has one veth pair into a
 * bridge in the root namespace and an address from 198.18.0.0/15 (RFC 2544's range for such
 * tests; nothing leaves the machine: no route, no forwarding). Every host knows the others by name
 * through /etc/netns/<ns>/hosts (which `ip netns exec` shows as /etc/hosts). Needs root.
 *
 * Every name here starts with `trawlh` so that `cleanupHosts()` removes exactly what this module
 * made (leftovers of a run that was killed included), and nothing else on the machine.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

const PREFIX = 'trawlh';
const BRIDGE = `${PREFIX}-br`;
const SUBNET = '198.18.33';
/** The root namespace's address on the bridge (where the test's load comes from). */
const ROOT_ADDRESS = `${SUBNET}.254`;
const DOMAIN = 'trawl.test';

export interface Host {
  /** h1, h2, ... */
  name: string;
  /** Network namespace. */
  ns: string;
  address: string;
  /** Fully qualified name (the RabbitMQ node's host). */
  fqdn: string;
}

function ip(args: string[], opts: { check?: boolean } = {}): string {
  const r = spawnSync('ip', args, { encoding: 'utf8', timeout: 20_000 });
  if ((opts.check ?? true) && r.status !== 0)
    throw new Error(`ip ${args.join(' ')}: ${r.stderr || r.stdout || r.error?.message}`);
  return r.stdout;
}

/** True when this process may make namespaces (root with iproute2). */
export function canMakeHosts(): boolean {
  if (process.getuid?.() !== 0) return false;
  return spawnSync('ip', ['netns', 'list'], { timeout: 10_000 }).status === 0;
}

/** Pids of every process running in a namespace. */
export function pidsIn(ns: string): number[] {
  const r = spawnSync('ip', ['netns', 'pids', ns], { encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0) return [];
  return r.stdout
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
}

/** SIGKILLs every process of a namespace and waits (bounded) until none is left. */
export function killAllIn(ns: string): void {
  for (let round = 0; round < 50; round++) {
    const pids = pidsIn(ns);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    spawnSync('sleep', ['0.1']);
  }
}

/**
 * Removes every namespace, bridge and /etc/netns folder of this module, with their processes:
 * called before the hosts are made (a killed run's leftovers) and when the test ends.
 */
export function cleanupHosts(): void {
  const names = ip(['netns', 'list'], { check: false })
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter((n) => n.startsWith(PREFIX));
  for (const ns of names) {
    killAllIn(ns);
    ip(['netns', 'delete', ns], { check: false });
  }
  for (const link of ip(['-o', 'link', 'show'], { check: false }).split('\n')) {
    const name = /^\d+: ([^:@]+)/.exec(link)?.[1];
    if (name?.startsWith(PREFIX)) ip(['link', 'delete', name], { check: false });
  }
  if (existsSync('/etc/netns')) {
    for (const d of readdirSync('/etc/netns'))
      if (d.startsWith(PREFIX)) rmSync(join('/etc/netns', d), { recursive: true, force: true });
  }
}

/** Makes `count` hosts h1..hN on one bridge; the root namespace gets ROOT_ADDRESS on it. */
export function makeHosts(count: number): Host[] {
  cleanupHosts();
  const hosts: Host[] = Array.from({ length: count }, (_, i) => ({
    name: `h${i + 1}`,
    ns: `${PREFIX}${i + 1}`,
    address: `${SUBNET}.${i + 1}`,
    fqdn: `h${i + 1}.${DOMAIN}`,
  }));
  ip(['link', 'add', BRIDGE, 'type', 'bridge']);
  ip(['addr', 'add', `${ROOT_ADDRESS}/24`, 'dev', BRIDGE]);
  ip(['link', 'set', BRIDGE, 'up']);
  const hostsFile = [
    '127.0.0.1 localhost',
    `${ROOT_ADDRESS} root.${DOMAIN}`,
    ...hosts.map((h) => `${h.address} ${h.fqdn} ${h.name}`),
    '',
  ].join('\n');
  for (const h of hosts) {
    ip(['netns', 'add', h.ns]);
    const outside = `${h.ns}-b`;
    ip(['link', 'add', outside, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', h.ns]);
    ip(['link', 'set', outside, 'master', BRIDGE]);
    ip(['link', 'set', outside, 'up']);
    ip(['-n', h.ns, 'addr', 'add', `${h.address}/24`, 'dev', 'eth0']);
    ip(['-n', h.ns, 'link', 'set', 'eth0', 'up']);
    ip(['-n', h.ns, 'link', 'set', 'lo', 'up']);
    const etc = join('/etc/netns', h.ns);
    mkdirSync(etc, { recursive: true });
    writeFileSync(join(etc, 'hosts'), hostsFile);
    writeFileSync(join(etc, 'hostname'), `${h.fqdn}\n`);
  }
  return hosts;
}

/** Takes a host's link down (it can reach no one, no one reaches it) or up again. */
export function setLink(h: Host, up: boolean): void {
  ip(['-n', h.ns, 'link', 'set', 'eth0', up ? 'up' : 'down']);
  if (up) {
    // The address's route comes back with the link; wait for it (bounded).
    for (let i = 0; i < 50; i++) {
      if (ip(['-n', h.ns, 'route', 'show'], { check: false }).includes(h.address)) return;
      spawnSync('sleep', ['0.1']);
    }
  }
}

/**
 * Cuts `a` off from every host of `others` and back (both directions), leaving every other path
 * as it is: a partition of the network between them. Blackhole routes drop the packets silently,
 * as a failed switch would.
 */
export function partition(a: Host, others: Host[], on: boolean): void {
  for (const b of others) {
    ip(['-n', a.ns, 'route', on ? 'add' : 'del', 'blackhole', `${b.address}/32`], {
      check: on,
    });
    ip(['-n', b.ns, 'route', on ? 'add' : 'del', 'blackhole', `${a.address}/32`], {
      check: on,
    });
  }
}

/** The command line that runs `argv` inside a host. */
export function inHost(h: Host, argv: string[]): string[] {
  return ['ip', 'netns', 'exec', h.ns, ...argv];
}

/**
 * Runs a command inside a host and answers its output (rejects on failure). Asynchronous: the load
 * the test generates keeps going while a slow command (rabbitmqctl starts a VM) runs.
 */
export async function runIn(h: Host, argv: string[], timeoutMs = 60_000): Promise<string> {
  const [cmd, ...args] = inHost(h, argv);
  const { stdout } = await execFileAsync(cmd as string, args, {
    encoding: 'utf8',
    timeout: timeoutMs,
  });
  return stdout;
}
