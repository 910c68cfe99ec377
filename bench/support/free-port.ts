import { createServer } from 'node:net';

/** A TCP port nobody listens on now (the benchmarks' clusters, and the e2e tests through theirs). */
export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      srv.close(() => ok(port));
    });
  });
}
