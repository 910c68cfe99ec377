import type { DNSResolver } from 'mailauth';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { SMTP_ERRORS } from './errors.ts';
import { editHeaders } from './headers.ts';
import type { SmtpSettings } from './settings.ts';
import { claimsAuthservId, createDnsResolver, verifyAuthentication } from './verify-auth.ts';

/** What the SMTP session tells of the client (Postfix's XFORWARD). */
export interface SmtpClient {
  ip: string;
  helo: string;
}

/**
 * The content filter's side of verify-auth.ts: every message loses the Authentication-Results
 * fields that claim Trawl's authserv-id (forged: RFC 8601 section 5) and, when Postfix forwarded
 * the client's address (XFORWARD), gets Trawl's own verification on top, before Trawl analyses it.
 * Without XFORWARD the filter's peer is Postfix itself, whose address says nothing of the sender:
 * nothing is verified (counted `skipped`), and the headers analyzer reads no trusted result.
 */
export function createInlineAuth(
  s: SmtpSettings,
  deps: { logger: Logger; registry: Registry; resolver?: DNSResolver | undefined },
) {
  const checks = new Counter({
    name: 'trawl_smtp_auth_checks_total',
    help: 'Authentication checks by outcome (verified, timed_out, skipped: no XFORWARD client address)',
    labelNames: ['outcome'],
    registers: [deps.registry],
  });
  const resolver =
    deps.resolver ??
    createDnsResolver({
      servers: s.dns_servers,
      timeoutMs: s.dns_timeout_ms,
      tries: s.dns_tries,
      maxRecords: 50,
      maxTxtChars: 16 * 1024,
    });
  const forged = (name: string, field: Buffer) => {
    if (name !== 'authentication-results') return false;
    const text = field.toString('latin1');
    return claimsAuthservId(text.slice(text.indexOf(':') + 1), s.authserv_id);
  };

  async function check(
    raw: Buffer,
    envelope: { from: string; client?: SmtpClient | undefined },
  ): Promise<{ raw: Buffer; authResults: string | undefined }> {
    const client = envelope.client;
    if (!client) {
      checks.inc({ outcome: 'skipped' });
      return { raw: editHeaders(raw, { add: [], drop: forged }), authResults: undefined };
    }
    try {
      const v = await verifyAuthentication({
        raw,
        clientIp: client.ip,
        helo: client.helo,
        mailFrom: envelope.from,
        authservId: s.authserv_id,
        resolver,
        timeoutMs: s.auth_timeout_ms,
      });
      checks.inc({ outcome: v.timedOut ? 'timed_out' : 'verified' });
      return {
        raw: editHeaders(raw, {
          add: [],
          prepend: [`${v.header.name}: ${v.header.value}`],
          drop: forged,
        }),
        authResults: v.header.value,
      };
    } catch (err) {
      // a bug in the verification must not lose the message: it is analysed unverified
      checks.inc({ outcome: 'skipped' });
      deps.logger.error(
        { err: (err as Error).message, code: SMTP_ERRORS.authCheck },
        'authentication check failed',
      );
      return { raw: editHeaders(raw, { add: [], drop: forged }), authResults: undefined };
    }
  }

  /** The message to analyse, and Trawl's Authentication-Results value when it verified. */
  return { check };
}

export type InlineAuth = ReturnType<typeof createInlineAuth>;
