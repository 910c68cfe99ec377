import type { Logger } from 'pino';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import type { Filter } from './filter.ts';
import type { SmtpClient } from './inline-auth.ts';
import type { SmtpSettings } from './settings.ts';

/** An SMTP error answer (smtp-server reads `responseCode`). */
function smtpError(code: number, message: string): Error {
  const err = new Error(message) as Error & { responseCode: number };
  err.responseCode = code;
  return err;
}

/** The client Postfix forwarded (XFORWARD ADDR and HELO); undefined when it forwarded none. */
function forwardedClient(session: SMTPServerSession): SmtpClient | undefined {
  const x = (session as { xForward?: Map<string, string | number | false> }).xForward;
  const ip = x?.get('ADDR');
  if (typeof ip !== 'string' || ip === '') return undefined;
  const helo = x?.get('HELO');
  return { ip: ip.replace(/^ipv6:/i, ''), helo: typeof helo === 'string' ? helo : '' };
}

/** The SMTP listener that receives mail from the MTA (content filter mode). */
export interface SmtpListener {
  listen(): Promise<{ host: string; port: number }>;
  close(): Promise<void>;
  readonly listening: boolean;
}

/**
 * The SMTP side Postfix talks to: after the queue as a `content_filter` (smtp transport), before
 * it as an `smtpd_proxy_filter`. Both hand over one transaction per message; the answer at the end
 * of DATA is the filter's (250 after re-injection, 451, 550). No AUTH, no STARTTLS: it listens on
 * loopback or a private network next to Postfix.
 */
export function createSmtpListener(d: {
  filter: Filter;
  settings: SmtpSettings;
  logger: Logger;
  /** Port override (tests: 0 = a free port). */
  port?: number;
}): SmtpListener {
  const s = d.settings;
  let listening = false;
  const server = new SMTPServer({
    name: 'trawl-smtp-filter',
    banner: 'Trawl content filter',
    disabledCommands: ['AUTH', 'STARTTLS'],
    authOptional: true,
    hideSTARTTLS: true,
    size: s.max_message_bytes,
    maxClients: s.max_clients,
    logger: false,
    // Postfix passes the client's address and HELO with XFORWARD (smtp_send_xforward_command):
    // the authentication check reads them.
    useXForward: true,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      let bytes = 0;
      let answered = false;
      const answer = (err: Error | null, message?: string) => {
        if (answered) return;
        answered = true;
        callback(err, message);
      };
      stream.on('data', (c: Buffer) => {
        bytes += c.length;
        if (bytes <= s.max_message_bytes) chunks.push(c);
      });
      stream.on('error', (err) => answer(smtpError(451, `4.3.0 ${err.message}`)));
      stream.on('end', () => {
        if (stream.sizeExceeded || bytes > s.max_message_bytes) {
          answer(smtpError(552, '5.3.4 Message too big for the content filter'));
          return;
        }
        const raw = Buffer.concat(chunks, bytes);
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        const to = session.envelope.rcptTo.map((r) => r.address);
        d.filter.handle(raw, { from, to, client: forwardedClient(session) }).then(
          (a) => {
            if (a.code === 250) answer(null, a.message);
            else answer(smtpError(a.code, a.message));
          },
          (err: unknown) => {
            d.logger.error({ err: String(err) }, 'filter failed');
            answer(smtpError(451, '4.3.0 Temporary failure in the content filter'));
          },
        );
      });
    },
  });
  server.on('error', (err) => d.logger.warn({ err: String(err) }, 'SMTP server error'));

  return {
    get listening() {
      return listening;
    },
    listen() {
      return new Promise((resolve, reject) => {
        const onError = (err: Error) => reject(err);
        server.server.once('error', onError);
        server.listen(d.port ?? s.listen_port, s.listen_host, () => {
          server.server.off('error', onError);
          listening = true;
          const a = server.server.address();
          resolve({
            host: s.listen_host,
            port: typeof a === 'object' && a ? a.port : (d.port ?? s.listen_port),
          });
        });
      });
    },
    close() {
      listening = false;
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
