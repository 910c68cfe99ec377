import { hostname } from 'node:os';
import { settingsReader } from '@trawl/config';
import { EnvelopeAddress, THREAT_LEVELS, type ThreatLevel } from '@trawl/contracts';
import { z } from 'zod';

/** What the filter does with a message (docs/smtp-filter.md, "Policies"). */
export const FILTER_ACTIONS = ['deliver', 'prefix', 'quarantine', 'reject'] as const;
/** What the filter does with a message: deliver, prefix the subject, quarantine or reject. */
export const FilterAction = z.enum(FILTER_ACTIONS);
export type FilterAction = z.infer<typeof FilterAction>;

/**
 * `after-queue` (content_filter), `before-queue` (smtpd_proxy_filter), or `milter` (smtpd_milters:
 * decided at the end of DATA, before the queue, with no second pass through Postfix).
 */
const FILTER_MODES = ['after-queue', 'before-queue', 'milter'] as const;
/** How the filter sits in the mail path: after the queue, before it, or as a milter. */
export const FilterMode = z.enum(FILTER_MODES);
export type FilterMode = z.infer<typeof FilterMode>;

/** The shipped policy: the action for each threat level. */
export const DEFAULT_POLICY: Readonly<Record<ThreatLevel, FilterAction>> = {
  none: 'deliver',
  low: 'deliver',
  medium: 'prefix',
  high: 'quarantine',
  critical: 'reject',
};

/**
 * `none=deliver,low=deliver,medium=prefix,high=quarantine,critical=reject` (or a JSON object):
 * levels left out keep their default. A scan of `,` and `=`, no pattern.
 */
const Policy = z.union([z.string(), z.record(z.string(), z.string())]).transform((v, ctx) => {
  const out: Record<ThreatLevel, FilterAction> = { ...DEFAULT_POLICY };
  let pairs: [string, string][];
  if (typeof v === 'string') {
    const text = v.trim();
    if (text.startsWith('{')) {
      try {
        pairs = Object.entries(JSON.parse(text) as Record<string, string>);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'is not valid JSON' });
        return z.NEVER;
      }
    } else {
      pairs = text
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p !== '')
        .map((p) => {
          const at = p.indexOf('=');
          return at < 0 ? [p, ''] : [p.slice(0, at).trim(), p.slice(at + 1).trim()];
        });
    }
  } else {
    pairs = Object.entries(v);
  }
  for (const [level, action] of pairs) {
    if (!(THREAT_LEVELS as readonly string[]).includes(level)) {
      ctx.addIssue({
        code: 'custom',
        message: `unknown threat level "${level}" (one of ${THREAT_LEVELS.join(', ')})`,
      });
      continue;
    }
    const a = FilterAction.safeParse(action);
    if (!a.success) {
      ctx.addIssue({
        code: 'custom',
        message: `${level}: unknown action "${action}" (one of ${FILTER_ACTIONS.join(', ')})`,
      });
      continue;
    }
    out[level as ThreatLevel] = a.data;
  }
  return out;
});

/** Printable ASCII without CR/LF: it is written into a header line as it is. */
const HeaderText = z
  .string()
  .max(64)
  .refine((s) => [...s].every((c) => c >= ' ' && c <= '~'), 'printable ASCII only');

const port = z.coerce.number().int().min(1).max(65_535);

/** `true`/`false` (also 1/0, yes/no) as an environment variable writes it. */
const Flag = z.union([z.boolean(), z.string()]).transform((v, ctx) => {
  if (typeof v === 'boolean') return v;
  const t = v.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(t)) return true;
  if (['false', '0', 'no', 'off'].includes(t)) return false;
  ctx.addIssue({ code: 'custom', message: 'must be true or false' });
  return z.NEVER;
});

/** An authserv-id: a host name, written as it is into a header. */
const AuthservId = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9][A-Za-z0-9.-]*$/, 'a host name (letters, digits, dots, hyphens)');

/** `ip` or `ip:port` (IPv6 as `[addr]:port`), comma-separated in the variable. */
const DnsServers = z
  .union([z.string(), z.array(z.string())])
  .transform((v) =>
    (typeof v === 'string' ? v.split(',') : v).map((x) => x.trim()).filter((x) => x !== ''),
  )
  .pipe(
    z
      .array(
        z
          .string()
          .regex(
            /^(?:[0-9.]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$|^[0-9A-Fa-f:]+$/,
            'an IP address, optionally :port',
          ),
      )
      .max(8),
  );

/** Settings of the SMTP content filter (TRAWL_SMTP_* variables; see docs/smtp-filter.md). */
export const SmtpSettings = z
  .object({
    mode: FilterMode.default('after-queue'),
    /** Where Postfix hands mail to the filter. */
    listen_host: z.string().min(1).default('127.0.0.1'),
    listen_port: port.default(10025),
    /** Postfix's return port (after-queue) or after-filter smtpd (before-queue). */
    return_host: z.string().min(1).default('127.0.0.1'),
    return_port: port.default(10026),
    /** The mail orchestrator (POST /internal/ingest). */
    mail_orchestrator_url: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }),
    /**
     * The gateway, where quarantined originals are recorded for their release (POST
     * /api/v1/quarantine); unset: quarantined mail cannot be released from Trawl.
     */
    gateway_url: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
    /** How long a message waits for its verdict, from the end of DATA. */
    deadline_ms: z.coerce.number().int().min(100).max(600_000).default(30_000),
    /** No verdict by the deadline, or Trawl unreachable: 451 (Postfix retries) or deliver tagged. */
    on_timeout: z.enum(['tempfail', 'deliver']).default('tempfail'),
    policy: Policy.default(DEFAULT_POLICY),
    /** What happens to a message Trawl could not analyse (refused by the gateway, failed). */
    unanalyzed_action: FilterAction.default('quarantine'),
    quarantine_address: EnvelopeAddress.optional(),
    subject_prefix: HeaderText.default('[SUSPECTED PHISHING]'),
    max_message_bytes: z.coerce
      .number()
      .int()
      .min(1024)
      .max(100 * 1024 * 1024)
      .default(25 * 1024 * 1024),
    max_clients: z.coerce.number().int().min(1).max(10_000).default(100),
    /** Connections kept open to the return port. */
    reinject_connections: z.coerce.number().int().min(1).max(100).default(8),
    /**
     * Tag only: never refuse, quarantine, prefix or hold a message; only add the headers (the first
     * step of a deployment: docs/smtp-filter.md).
     */
    tag_only: Flag.default(false),
    /**
     * Verify SPF, DKIM, DMARC and ARC itself (client address and HELO from XFORWARD) and write its
     * own Authentication-Results; off when an OpenDKIM/OpenDMARC in front does it.
     */
    verify_auth: Flag.default(true),
    /** The authserv-id of its Authentication-Results (RFC 8601): a name of this host. */
    authserv_id: AuthservId.default(() => hostname().toLowerCase()),
    /** DNS servers for the verification (`ip` or `ip:port`); empty: the system's. */
    dns_servers: DnsServers.default([]),
    dns_timeout_ms: z.coerce.number().int().min(100).max(30_000).default(2000),
    dns_tries: z.coerce.number().int().min(1).max(5).default(2),
    /** The whole verification's deadline; past it every method is temperror. */
    auth_timeout_ms: z.coerce.number().int().min(100).max(60_000).default(8000),
  })
  .superRefine((s, ctx) => {
    const used = new Set(Object.values(s.policy).map((a) => effectiveAction(a, s.mode)));
    used.add(effectiveAction(s.unanalyzed_action, s.mode));
    if (s.tag_only) used.clear();
    // a milter quarantines in Postfix's hold queue: no mailbox needed
    if (used.has('quarantine') && !s.quarantine_address && s.mode !== 'milter') {
      ctx.addIssue({
        code: 'custom',
        path: ['quarantine_address'],
        message:
          'required: the policy quarantines (after-queue, reject also quarantines); set it, or choose other actions',
      });
    }
  });
export type SmtpSettings = z.output<typeof SmtpSettings>;
/** The SMTP filter's settings as written, before defaults. */
export type SmtpSettingsInput = z.input<typeof SmtpSettings>;

/**
 * After the queue a message can no longer be refused to its sender (a bounce would go to a forged
 * return path: backscatter): `reject` quarantines it instead.
 */
export function effectiveAction(action: FilterAction, mode: FilterMode): FilterAction {
  return action === 'reject' && mode === 'after-queue' ? 'quarantine' : action;
}

/** The variables main.ts reads, and the settings they fill. */
export const SMTP_ENV = {
  TRAWL_SMTP_MODE: 'mode',
  TRAWL_SMTP_LISTEN_HOST: 'listen_host',
  TRAWL_SMTP_LISTEN_PORT: 'listen_port',
  TRAWL_SMTP_RETURN_HOST: 'return_host',
  TRAWL_SMTP_RETURN_PORT: 'return_port',
  TRAWL_SMTP_MAIL_ORCHESTRATOR_URL: 'mail_orchestrator_url',
  TRAWL_SMTP_GATEWAY_URL: 'gateway_url',
  TRAWL_SMTP_DEADLINE_MS: 'deadline_ms',
  TRAWL_SMTP_ON_TIMEOUT: 'on_timeout',
  TRAWL_SMTP_POLICY: 'policy',
  TRAWL_SMTP_UNANALYZED_ACTION: 'unanalyzed_action',
  TRAWL_SMTP_QUARANTINE_ADDRESS: 'quarantine_address',
  TRAWL_SMTP_SUBJECT_PREFIX: 'subject_prefix',
  TRAWL_SMTP_MAX_MESSAGE_BYTES: 'max_message_bytes',
  TRAWL_SMTP_MAX_CLIENTS: 'max_clients',
  TRAWL_SMTP_REINJECT_CONNECTIONS: 'reinject_connections',
  TRAWL_SMTP_TAG_ONLY: 'tag_only',
  TRAWL_SMTP_VERIFY_AUTH: 'verify_auth',
  TRAWL_SMTP_AUTHSERV_ID: 'authserv_id',
  TRAWL_SMTP_DNS_SERVERS: 'dns_servers',
  TRAWL_SMTP_DNS_TIMEOUT_MS: 'dns_timeout_ms',
  TRAWL_SMTP_DNS_TRIES: 'dns_tries',
  TRAWL_SMTP_AUTH_TIMEOUT_MS: 'auth_timeout_ms',
} as const;

/** Settings from environment variables; problems name the variable. */
export const smtpSettingsFromEnv = settingsReader(SMTP_ENV, SmtpSettings);
