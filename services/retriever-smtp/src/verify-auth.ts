import { Resolver } from 'node:dns/promises';
import { AUTH_RESULT_VALUES } from '@trawl/contracts';
import { authenticate, type DNSResolver } from 'mailauth';

/**
 * Trawl's own check of a message's SPF, DKIM, DMARC and ARC when it sees the SMTP session (issue
 * 32): the content filter (client address and HELO from Postfix's XFORWARD) and the milter call
 * this one function. It verifies with `mailauth` against DNS through an injectable, bounded
 * resolver and answers the `Authentication-Results` field to write (RFC 8601, under Trawl's own
 * authserv-id) with a structured result. The headers analyzer then trusts that field as the
 * trusted hop (docs/smtp-filter.md, "Authentication").
 */

/** A method's result as RFC 8601 names them (the values the evidence stores). */
export type AuthMethodResult = (typeof AUTH_RESULT_VALUES)[number];

/** The filter's own SPF, DKIM, DMARC and ARC check of a message, as the field it writes on top. */
export interface AuthVerification {
  /** The field to write on top of the message: `Authentication-Results: <id>; spf=…; …`. */
  header: { name: 'Authentication-Results'; value: string };
  result: {
    spf: { result: AuthMethodResult; domain: string };
    dkim: { result: AuthMethodResult; domain: string; selector: string; aligned: boolean }[];
    dmarc: { result: AuthMethodResult; domain: string; policy: string };
    arc: { result: AuthMethodResult };
  };
  /**
   * 1-based positions, among the message's Authentication-Results fields, of those carrying this
   * authserv-id: forged (RFC 8601 section 5), to be removed (a milter deletes them by position).
   */
  forged: number[];
  /** The verification ran out of time: every method is temperror. */
  timedOut: boolean;
}

/** What the authentication check needs: the message as received and its SMTP envelope. */
export interface VerifyAuthInput {
  /** The message as received (header and body). */
  raw: Buffer;
  /** The SMTP client's address (XFORWARD ADDR, or the milter's connect address). */
  clientIp: string;
  /** The name the client gave in HELO/EHLO ('' when unknown). */
  helo: string;
  /** The MAIL FROM address ('' for the null sender). */
  mailFrom: string;
  /** Trawl's authserv-id (RFC 8601 section 2.5: a name of the host that verified). */
  authservId: string;
  resolver: DNSResolver;
  /** The whole verification's deadline (each DNS query has its own, in the resolver). */
  timeoutMs: number;
}

const RESULTS: ReadonlySet<string> = new Set(AUTH_RESULT_VALUES);

function methodResult(r: string | undefined): AuthMethodResult {
  if (r === 'temperr') return 'temperror';
  return r !== undefined && RESULTS.has(r) ? (r as AuthMethodResult) : 'none';
}

/** One line of header text: no CR, LF or other control characters (they come from the message). */
function oneLine(s: string): string {
  let out = '';
  for (const c of s) out += c < ' ' || c === '\x7f' ? ' ' : c;
  return out.replace(/ {2,}/g, ' ').trim();
}

/**
 * The authserv-id of an Authentication-Results value (`id [version]; …`), lower-case: the first
 * token after white space and comments. '' when there is none.
 */
export function authservIdOf(value: string): string {
  let i = 0;
  const v = value.slice(0, 4096);
  for (;;) {
    while (i < v.length && /\s/.test(v[i] as string)) i++;
    if (v[i] !== '(') break;
    // a comment (not nested beyond what a linear skip to its end reads)
    let depth = 0;
    for (; i < v.length; i++) {
      if (v[i] === '(') depth++;
      else if (v[i] === ')' && --depth === 0) {
        i++;
        break;
      }
    }
  }
  let j = i;
  while (j < v.length && !/[\s;(]/.test(v[j] as string)) j++;
  return v.slice(i, j).toLowerCase();
}

/** Whether an Authentication-Results value claims `authservId` (case-insensitive). */
export function claimsAuthservId(value: string, authservId: string): boolean {
  return authservIdOf(value) === authservId.toLowerCase();
}

/** The values of the message's Authentication-Results fields, in order (unfolded). */
function authResultsValues(raw: Buffer): string[] {
  const out: string[] = [];
  const end = raw.indexOf('\r\n\r\n') >= 0 ? raw.indexOf('\r\n\r\n') : raw.indexOf('\n\n');
  const head = raw.toString('latin1', 0, end < 0 ? Math.min(raw.length, 1024 * 1024) : end);
  const unfolded = head.replace(/\r?\n[ \t]/g, ' ');
  for (const line of unfolded.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === 'authentication-results') {
      out.push(line.slice(colon + 1));
    }
  }
  return out;
}

class VerifyTimeout extends Error {}

/**
 * Verifies SPF (client address, HELO, MAIL FROM), DKIM, DMARC and ARC of `raw` and answers the
 * Authentication-Results field for it. Never throws for what the message or DNS does: a DNS
 * failure is temperror, a deadline passed makes every method temperror.
 */
export async function verifyAuthentication(input: VerifyAuthInput): Promise<AuthVerification> {
  const forged = authResultsValues(input.raw)
    .map((v, i) => (claimsAuthservId(v, input.authservId) ? i + 1 : 0))
    .filter((n) => n > 0);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new VerifyTimeout()), input.timeoutMs);
  });
  try {
    const r = await Promise.race([
      authenticate(input.raw, {
        ip: input.clientIp,
        helo: input.helo,
        sender: input.mailFrom,
        mta: input.authservId,
        resolver: input.resolver,
        disableBimi: true,
      }),
      deadline,
    ]);
    const spf = r.spf ? methodResult(r.spf.status.result) : 'none';
    // an unsigned message has one `none` entry without a domain: no signature, no entry
    const signatures = (r.dkim.results ?? []).filter((d) => d.signingDomain);
    const dkim = signatures.map((d) => ({
      result: methodResult(d.status.result),
      domain: d.signingDomain ?? '',
      selector: d.selector ?? '',
      // aligned with the From domain, as DMARC found it
      aligned:
        d.status.result === 'pass' &&
        !!r.dmarc &&
        typeof r.dmarc.alignment?.dkim?.result === 'string' &&
        r.dmarc.alignment.dkim.result.toLowerCase() === (d.signingDomain ?? '').toLowerCase(),
    }));
    const dmarc = r.dmarc
      ? {
          result: methodResult(r.dmarc.status.result),
          domain: r.dmarc.domain ?? '',
          policy: r.dmarc.policy ?? '',
        }
      : { result: 'none' as const, domain: '', policy: '' };
    const arc = r.arc ? methodResult(r.arc.status.result) : 'none';
    const infos: string[] = [];
    for (const d of signatures) infos.push(d.info);
    if (dkim.length === 0) infos.push('dkim=none');
    infos.push(r.spf ? r.spf.info : 'spf=none');
    infos.push((r.arc ? r.arc.info : undefined) || `arc=${arc}`);
    infos.push(r.dmarc ? r.dmarc.info : `dmarc=${dmarc.result}`);
    return {
      header: {
        name: 'Authentication-Results',
        value: `${input.authservId};\r\n\t${infos.map(oneLine).join(';\r\n\t')}`,
      },
      result: {
        spf: { result: spf, domain: r.spf ? r.spf.domain : '' },
        dkim,
        dmarc,
        arc: { result: arc },
      },
      forged,
      timedOut: false,
    };
  } catch (err) {
    if (!(err instanceof VerifyTimeout)) throw err;
    return {
      header: {
        name: 'Authentication-Results',
        value: `${input.authservId};\r\n\tdkim=temperror (verification timed out);\r\n\tspf=temperror;\r\n\tarc=temperror;\r\n\tdmarc=temperror`,
      },
      result: {
        spf: { result: 'temperror', domain: '' },
        dkim: [],
        dmarc: { result: 'temperror', domain: '', policy: '' },
        arc: { result: 'temperror' },
      },
      forged,
      timedOut: true,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Bounds of the DNS resolver the verification uses. */
export interface DnsResolverOptions {
  /** Servers (`ip` or `ip:port`, `[v6]:port`); none: the system's (/etc/resolv.conf). */
  servers?: readonly string[];
  /** One query's timeout, per try. */
  timeoutMs: number;
  tries: number;
  /** Most records one answer may hold, and most characters of its TXT strings together. */
  maxRecords: number;
  maxTxtChars: number;
}

/** An answer over the resolver's bounds: mailauth counts it as a temporary error. */
export class DnsAnswerTooLarge extends Error {
  readonly code = 'TRAWL_DNS_ANSWER_TOO_LARGE';
}

/**
 * A resolver for `mailauth` (dns.promises.resolve's shape) over node's c-ares resolver: each query
 * times out (`timeoutMs` × `tries`), and an answer with more than `maxRecords` records or more
 * than `maxTxtChars` characters of TXT data is refused (temperror), so a hostile zone cannot make
 * the verification read without bound. ENOTFOUND and ENODATA pass through (they mean "none").
 */
export function createDnsResolver(o: DnsResolverOptions): DNSResolver {
  const r = new Resolver({ timeout: o.timeoutMs, tries: o.tries });
  if (o.servers && o.servers.length > 0) r.setServers([...o.servers]);
  return async (name, rrtype) => {
    const answer = (await r.resolve(name, rrtype)) as unknown;
    const list = Array.isArray(answer) ? answer : [answer];
    if (list.length > o.maxRecords) {
      throw new DnsAnswerTooLarge(`${rrtype} ${name}: ${list.length} records`);
    }
    if (rrtype === 'TXT') {
      let chars = 0;
      for (const rec of list as string[][]) for (const s of rec) chars += s.length;
      if (chars > o.maxTxtChars) throw new DnsAnswerTooLarge(`TXT ${name}: ${chars} characters`);
    }
    return list as string[][] | string[];
  };
}
