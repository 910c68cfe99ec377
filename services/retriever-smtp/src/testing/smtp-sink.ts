import { SMTPServer } from 'smtp-server';

export interface SunkMessage {
  from: string;
  to: string[];
  raw: Buffer;
  /** When it arrived (performance.now()). */
  at: number;
  /** Header lines of the message (first occurrence of each name, lower-case name). */
  header(name: string): string | undefined;
}

export interface SmtpSink {
  port: number;
  messages: SunkMessage[];
  /** Resolves once `count` messages arrived in total, or rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/** First value of a header field (unfolded), read from the header block with a scan. */
export function headerValue(raw: Buffer, name: string): string | undefined {
  const text = raw.toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const block = end < 0 ? text : text.slice(0, end);
  const lines = block.split(/\r?\n/);
  const want = `${name.toLowerCase()}:`;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (!line.toLowerCase().startsWith(want)) continue;
    let v = line.slice(want.length);
    for (let j = i + 1; j < lines.length && /^[ \t]/.test(lines[j] ?? ''); j++) v += lines[j];
    return v.trim();
  }
  return undefined;
}

/** Where the test Postfix delivers: an SMTP server on loopback that keeps every message. */
export async function startSmtpSink(): Promise<SmtpSink> {
  const messages: SunkMessage[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const server = new SMTPServer({
    name: 'sink.trawl.test',
    disabledCommands: ['AUTH', 'STARTTLS'],
    authOptional: true,
    hideSTARTTLS: true,
    logger: false,
    maxClients: 200,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          at: performance.now(),
          header: (n) => headerValue(raw, n),
        });
        for (const w of [...waiters]) {
          if (messages.length >= w.count) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve();
          }
        }
        callback(null, 'kept');
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const a = server.server.address();
  const port = typeof a === 'object' && a ? a.port : 0;
  return {
    port,
    messages,
    waitFor(count, timeoutMs) {
      if (messages.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const w = {
          count,
          resolve: () => {
            clearTimeout(t);
            resolve();
          },
        };
        const t = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`${messages.length} of ${count} messages arrived in ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.push(w);
      });
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}
