import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A peer that answers what an attacker's (or a broken) server would (issue 28): a huge body
 * generated as it is sent (never held in memory; written only as fast as the client reads it), or
 * a body trickled a few bytes at a time. It counts what it managed to write, so a test can show
 * the client stopped reading and closed the connection.
 */
export interface HostilePeer {
  url: string;
  port: number;
  /** Requests received. */
  requests: number;
  /** Body bytes written to clients (all requests). */
  bytesWritten: number;
  /** Connections the client closed before the body was complete. */
  cutOff: number;
  close(): Promise<void>;
}

export interface HostilePeerOptions {
  status?: number;
  contentType?: string;
  /** Body size (default 300 MB). */
  bytes?: number;
  /** Send Content-Length (default true: a peer may also stream without one). */
  declareLength?: boolean;
  /** Trickle: this many bytes every `trickleMs` (default: as fast as the client reads). */
  trickleBytes?: number;
  trickleMs?: number;
  /** The repeated text of the body (default `<p>internal error page</p>\n`). */
  pattern?: string;
  /** Answers some requests itself (e.g. /health); return true when it did. */
  route?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

export async function startHostilePeer(o: HostilePeerOptions = {}): Promise<HostilePeer> {
  const total = o.bytes ?? 300 * 1024 * 1024;
  const chunk = Buffer.from((o.pattern ?? '<p>internal error page</p>\n').repeat(2048));
  const peer: HostilePeer = {
    url: '',
    port: 0,
    requests: 0,
    bytesWritten: 0,
    cutOff: 0,
    close: async () => {},
  };
  const server = createServer((req, res) => {
    req.resume();
    if (o.route?.(req, res)) return;
    peer.requests++;
    res.writeHead(o.status ?? 500, {
      'content-type': o.contentType ?? 'text/html',
      ...(o.declareLength === false ? {} : { 'content-length': String(total) }),
    });
    let sent = 0;
    let closed = false;
    res.on('close', () => {
      closed = true;
      if (sent < total) peer.cutOff++;
    });
    if (o.trickleMs !== undefined) {
      const step = o.trickleBytes ?? 1;
      const timer = setInterval(() => {
        if (closed || sent >= total) {
          clearInterval(timer);
          if (!closed) res.end();
          return;
        }
        const n = Math.min(step, total - sent);
        res.write(chunk.subarray(0, n));
        sent += n;
        peer.bytesWritten += n;
      }, o.trickleMs);
      return;
    }
    const pump = () => {
      while (!closed && sent < total) {
        const n = Math.min(chunk.length, total - sent);
        sent += n;
        peer.bytesWritten += n;
        if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          res.once('drain', pump);
          return;
        }
      }
      if (!closed) res.end();
    };
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  peer.port = (server.address() as AddressInfo).port;
  peer.url = `http://127.0.0.1:${peer.port}`;
  peer.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return peer;
}

/** The process's resident memory now, in MiB. */
export function rssMiB(): number {
  return Math.round(process.memoryUsage().rss / 1024 / 1024);
}
