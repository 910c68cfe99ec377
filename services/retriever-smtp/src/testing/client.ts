import nodemailer from 'nodemailer';
import { pino } from 'pino';

/** An SMTP client of a test Postfix (pooled: `connections` sessions, many messages each). */
export function smtpClient(port: number, connections = 0) {
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    ignoreTLS: true,
    ...(connections > 0 ? { pool: true, maxConnections: connections, maxMessages: 100_000 } : {}),
  });
}

export const silentLogger = pino({ level: 'silent' });
