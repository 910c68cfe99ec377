import { createServer } from 'node:net';

/**
 * Ports tried first: below Linux's ephemeral range (32768-60999), which the kernel hands to every
 * outgoing connection. A port the kernel picked for `listen(0)` comes from that range, and between
 * closing it and the test's own listen, any client socket of a parallel test may take it
 * (EADDRINUSE); a port below the range is only ever taken by a listener that asked for it.
 */
const LOW = 20_000;
const HIGH = 32_000;

function tryListen(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen(port, '127.0.0.1', () => {
      const a = srv.address();
      const got = typeof a === 'object' && a ? a.port : undefined;
      srv.close(() => resolve(got));
    });
  });
}

/**
 * Ports this process handed out: a port is free until its caller listens on it, so without this a
 * test asking for several at once (then listening on each) could be given one twice.
 */
const handedOut = new Set<number>();

/**
 * A TCP port on 127.0.0.1 nobody listens on now (closed again at once) and not handed out before
 * by this process, for tests and benches.
 */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const pick = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (handedOut.has(pick)) continue;
    const port = await tryListen(pick);
    if (port !== undefined) {
      handedOut.add(port);
      return port;
    }
  }
  const any = await tryListen(0);
  if (any === undefined) throw new Error('no free TCP port on 127.0.0.1');
  return any;
}
