import { createServer, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { SMTP_ERRORS } from '../errors.ts';
import { PacketDecoder } from './codec.ts';
import { type MilterJudge, type MilterOutcome, MilterSession } from './session.ts';

/** The milter's TCP listener: one session per MTA connection. */
export interface MilterListener {
  readonly listening: boolean;
  readonly address: { host: string; port: number };
  close(): Promise<void>;
}

export interface MilterListenerOptions {
  host: string;
  /** 0: a free port (tests). */
  port: number;
  maxPacketBytes: number;
  maxMessageBytes: number;
  maxClients: number;
  judge: MilterJudge;
  logger: Logger;
  /** A connection idle this long is closed (Postfix opens a new one per SMTP session). */
  idleMs?: number;
  /** How long close() lets the messages being judged get their answer (default 10 s). */
  closeGraceMs?: number;
}

/** What a message gets once the listener is closing: Postfix tells its client to try again. */
const CLOSING: MilterOutcome = {
  modifications: [],
  final: { kind: 'reply', text: '451 4.3.2 The Trawl milter is stopping; try again later' },
};

/**
 * The TCP side of the milter: one session per connection, its packets handled one at a time. The
 * socket is paused while a packet is being answered (the end of a message waits for its verdict),
 * so a peer that writes ahead is held back by TCP, never buffered here.
 */
export async function listenMilter(o: MilterListenerOptions): Promise<MilterListener> {
  const sockets = new Set<Socket>();
  let listening = false;
  let closing = false;
  let judging = 0;
  let idle: (() => void) | undefined;
  // a message judged when the listener closes still gets its answer; one that ends later, 451
  const judge: MilterJudge = async (m) => {
    if (closing) return CLOSING;
    judging++;
    try {
      return await o.judge(m);
    } finally {
      judging--;
      if (judging === 0) idle?.();
    }
  };
  const served = { ...o, judge };
  const server = createServer({ noDelay: true }, (socket) => {
    if (sockets.size >= o.maxClients) {
      // Postfix applies milter_default_action (tempfail) to this session
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.setTimeout(o.idleMs ?? 600_000, () => socket.destroy());
    serve(socket, served);
  });
  server.maxConnections = o.maxClients + 16;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => o.logger.warn({ err: String(err) }, 'milter listener error'));
  listening = true;
  const a = server.address();
  const address = { host: o.host, port: typeof a === 'object' && a ? a.port : o.port };
  return {
    get listening() {
      return listening;
    },
    address,
    async close() {
      listening = false;
      closing = true;
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      if (judging > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, o.closeGraceMs ?? 10_000);
          idle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      // a session still waiting for a verdict loses its answer: Postfix tempfails the message
      for (const s of sockets) s.destroy();
      await stopped;
    },
  };
}

function serve(socket: Socket, o: MilterListenerOptions): void {
  const decoder = new PacketDecoder(o.maxPacketBytes);
  const session = new MilterSession(
    { maxMessageBytes: o.maxMessageBytes, judge: o.judge },
    {
      write: (b) => {
        if (!socket.destroyed) socket.write(b);
      },
      close: (reason) => {
        if (reason !== 'quit') {
          o.logger.warn({ reason, code: SMTP_ERRORS.milterProtocol }, 'milter connection closed');
        }
        socket.end();
        socket.destroySoon();
      },
    },
  );
  let busy = Promise.resolve();
  socket.on('data', (chunk: Buffer) => {
    const r = decoder.push(chunk);
    if (r.kind === 'refused') {
      o.logger.warn(
        { reason: r.reason, code: SMTP_ERRORS.milterProtocol },
        'milter packet refused',
      );
      socket.destroy();
      return;
    }
    if (r.packets.length === 0) return;
    socket.pause();
    busy = busy.then(async () => {
      // the answers to one read leave in one write (a message's header acks, its decision and
      // changes): a write per packet cost the milter ~2 ms of CPU a message in syscalls
      socket.cork();
      try {
        for (const p of r.packets) await session.handle(p);
      } finally {
        socket.uncork();
      }
      if (!socket.destroyed) socket.resume();
    });
  });
}
