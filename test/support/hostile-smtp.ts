import { createServer, type Socket } from 'node:net';

/**
 * An SMTP server that answers as a hostile (or broken) one would (issue 28): `trickle` greets and
 * answers EHLO normally, then answers MAIL FROM one byte every `trickleMs` without ever ending the
 * reply; `huge` answers EHLO with an endless multi-line reply, written as fast as it is read.
 * It counts the bytes it wrote and the connections the client cut.
 */
export interface HostileSmtp {
  port: number;
  bytesWritten: number;
  /** Connections closed by the client before the server was done. */
  cutOff: number;
  close(): Promise<void>;
}

export async function startHostileSmtp(o: {
  mode: 'trickle' | 'huge';
  trickleMs?: number;
}): Promise<HostileSmtp> {
  const sockets = new Set<Socket>();
  const state: HostileSmtp = { port: 0, bytesWritten: 0, cutOff: 0, close: async () => {} };
  const server = createServer((socket) => {
    sockets.add(socket);
    let open = true;
    const timers: NodeJS.Timeout[] = [];
    socket.on('close', () => {
      open = false;
      sockets.delete(socket);
      state.cutOff++;
      for (const t of timers) clearInterval(t);
    });
    socket.on('error', () => undefined);
    const write = (s: string | Buffer) => {
      state.bytesWritten += s.length;
      return socket.write(s);
    };
    write('220 hostile.test ESMTP\r\n');
    let buf = '';
    socket.on('data', (chunk: Buffer) => {
      buf += chunk.toString('latin1');
      for (let nl = buf.indexOf('\r\n'); nl >= 0; nl = buf.indexOf('\r\n')) {
        const cmd = buf.slice(0, nl).toUpperCase();
        buf = buf.slice(nl + 2);
        if (cmd.startsWith('EHLO') || cmd.startsWith('HELO')) {
          if (o.mode === 'huge') {
            const line = Buffer.from(`250-${'x'.repeat(1000)}\r\n`.repeat(64));
            const pump = () => {
              while (open && write(line)) {
                /* as fast as the client reads */
              }
              if (open) socket.once('drain', pump);
            };
            pump();
          } else {
            write('250-hostile.test\r\n250 8BITMIME\r\n');
          }
        } else if (cmd.startsWith('MAIL FROM')) {
          write('250');
          timers.push(setInterval(() => open && write('-'), o.trickleMs ?? 50));
        } else if (cmd.startsWith('QUIT')) {
          write('221 bye\r\n');
          socket.end();
        } else {
          write('250 ok\r\n');
        }
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a = server.address();
  state.port = typeof a === 'object' && a ? a.port : 0;
  state.close = () =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  return state;
}
