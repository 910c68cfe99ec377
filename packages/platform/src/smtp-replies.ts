import { connect, type Socket } from 'node:net';

/**
 * The bound on an SMTP server's replies (issue 28), for Trawl's SMTP clients (the reporter
 * notifier, the content filter's re-injection), both nodemailer. nodemailer bounds the size of one
 * reply (`maxResponseSize`) and the time a socket may stay silent (`socketTimeout`), but a server
 * that trickles a byte now and then is never silent and can hold a send for ever. These sockets
 * add the time bound: a server that has not completed its reply `replyTimeoutMs` after the last
 * command is cut off (the socket destroyed, the send fails). Replies are read as they pass on a
 * plain connection; once TLS hides them (STARTTLS, or TLS from the start) the socket is no longer
 * watched, and `destroyAll` is the bound: a caller that sends over TLS gives each send a deadline
 * and destroys its sockets when it passes (the notifier does).
 */

/** Largest single reply read from an SMTP server (nodemailer `maxResponseSize`). */
export const SMTP_MAX_REPLY_BYTES = 64 * 1024;

/** Default time a server has to complete its reply after a command. */
export const SMTP_REPLY_TIMEOUT_MS = 60_000;

type SocketCallback = (err: Error | null, socketOptions?: { connection: Socket }) => void;

/** The part of nodemailer's options a connection is opened with. */
interface ConnectOptions {
  host?: string | undefined;
  port?: number | string | undefined;
  secure?: boolean | undefined;
  connectionTimeout?: number | undefined;
}

/** nodemailer socket options that bound an SMTP peer's replies, and a way to end them. */
export interface BoundedSmtp {
  /** nodemailer options: `getSocket` and `maxResponseSize`. */
  options: {
    getSocket(options: ConnectOptions, callback: SocketCallback): void;
    maxResponseSize: number;
  };
  /** Destroys every socket still open (a send's deadline passed): its send fails at once. */
  destroyAll(reason: Error): void;
  /** Stops the watchdog (the transport's sockets are closed by the transport). */
  close(): void;
}

/** A reply line is final when its fourth character is not `-` (`250 ok`, `250`, not `250-ok`). */
function isFinal(line: string): boolean {
  return line.length >= 3 && line[3] !== '-';
}

/** Bounds an SMTP peer's replies: their size, and how long each may take. */
export function boundedSmtp(
  o: { replyTimeoutMs?: number; maxReplyBytes?: number; checkEveryMs?: number } = {},
): BoundedSmtp {
  const replyTimeoutMs = o.replyTimeoutMs ?? SMTP_REPLY_TIMEOUT_MS;
  const watched = new Map<Socket, { waitingSince: number | null; tail: string }>();
  const open = new Set<Socket>();
  const timer = setInterval(
    () => {
      const now = performance.now();
      for (const [socket, w] of watched) {
        if (w.waitingSince !== null && now - w.waitingSince > replyTimeoutMs) {
          watched.delete(socket);
          socket.destroy(
            new Error(`the SMTP server did not complete its reply within ${replyTimeoutMs} ms`),
          );
        }
      }
    },
    o.checkEveryMs ?? Math.min(1000, Math.max(10, Math.floor(replyTimeoutMs / 4))),
  );
  timer.unref();

  function watch(socket: Socket): void {
    // waiting from the start: the greeting is a reply too
    const w = { waitingSince: performance.now() as number | null, tail: '' };
    watched.set(socket, w);
    const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
    socket.write = ((...args: unknown[]) => {
      const data = args[0];
      const head =
        typeof data === 'string'
          ? data.slice(0, 9)
          : Buffer.isBuffer(data)
            ? data.subarray(0, 9).toString('latin1')
            : '';
      // TLS from here on (a ClientHello, or STARTTLS): replies can no longer be read
      if (head.charCodeAt(0) === 0x16 || head.toUpperCase().startsWith('STARTTLS'))
        watched.delete(socket);
      w.waitingSince = performance.now();
      return write(...args);
    }) as Socket['write'];
    socket.on('data', (chunk: Buffer) => {
      // only the unfinished last line is kept, and at most a line's worth of it
      let text = w.tail + chunk.toString('latin1');
      let nl = text.indexOf('\n');
      while (nl >= 0) {
        const line = text.slice(0, nl);
        if (isFinal(line.endsWith('\r') ? line.slice(0, -1) : line)) w.waitingSince = null;
        text = text.slice(nl + 1);
        nl = text.indexOf('\n');
      }
      w.tail = text.slice(0, 1024);
    });
  }

  return {
    options: {
      getSocket(options, callback) {
        // nodemailer takes a connected socket (`connection`) and speaks SMTP (and TLS) over it
        const port = Number(options.port) || (options.secure ? 465 : 587);
        const socket = connect({ host: options.host ?? 'localhost', port });
        open.add(socket);
        socket.once('close', () => {
          open.delete(socket);
          watched.delete(socket);
        });
        const connectTimer = setTimeout(
          () => socket.destroy(new Error('the SMTP server did not accept the connection in time')),
          options.connectionTimeout ?? 15_000,
        );
        const onError = (err: Error) => {
          clearTimeout(connectTimer);
          callback(err);
        };
        socket.once('error', onError);
        socket.once('connect', () => {
          clearTimeout(connectTimer);
          socket.off('error', onError);
          watch(socket);
          callback(null, { connection: socket });
        });
      },
      maxResponseSize: o.maxReplyBytes ?? SMTP_MAX_REPLY_BYTES,
    },
    destroyAll(reason) {
      for (const socket of open) socket.destroy(reason);
    },
    close() {
      clearInterval(timer);
    },
  };
}
