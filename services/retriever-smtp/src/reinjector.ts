import { boundedSmtp } from '@trawl/platform';
import nodemailer from 'nodemailer';

/** Hands a message back to Postfix (its return port, or the after-filter smtpd before the queue). */
export interface Reinjector {
  send(msg: { from: string; to: string[]; raw: Buffer }): Promise<void>;
  close(): void;
}

/** A refusal by the return port: its SMTP code, so the filter can pass a 5xx on as a 5xx. */
export class ReinjectError extends Error {
  constructor(
    message: string,
    readonly responseCode: number | undefined,
  ) {
    super(message);
    this.name = 'ReinjectError';
  }
}

/** Hands an accepted message back to the MTA's return port over SMTP (content filter mode). */
export function createReinjector(opts: {
  host: string;
  port: number;
  connections: number;
  /** Name given in EHLO. */
  name?: string;
  /** Time Postfix has to complete each reply (default 60 s); past it the connection is cut. */
  replyTimeoutMs?: number;
}): Reinjector {
  // each reply at most 64 KiB, and complete within replyTimeoutMs of its command (a plain
  // connection to the return port: the replies are read as they pass)
  const bounded = boundedSmtp(
    opts.replyTimeoutMs === undefined ? {} : { replyTimeoutMs: opts.replyTimeoutMs },
  );
  const transport = nodemailer.createTransport({
    ...bounded.options,
    pool: true,
    host: opts.host,
    port: opts.port,
    secure: false,
    ignoreTLS: true,
    maxConnections: opts.connections,
    maxMessages: 1000,
    name: opts.name ?? 'trawl-smtp-filter',
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 60_000,
  });
  return {
    async send(msg) {
      try {
        await transport.sendMail({
          envelope: { from: msg.from, to: msg.to },
          raw: msg.raw,
        });
      } catch (err) {
        const e = err as Error & { responseCode?: number; response?: string };
        throw new ReinjectError(
          `the return port did not take the message: ${e.response ?? e.message}`,
          e.responseCode,
        );
      }
    },
    close() {
      transport.close();
      bounded.close();
    },
  };
}
