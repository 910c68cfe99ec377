import { settingsReader } from '@trawl/config';
import { EnvelopeAddress } from '@trawl/contracts';
import { type OAuthGrantInput, ServiceAccountKeyJson } from '@trawl/oauth';
import { z } from 'zod';

const bool = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no'])])
  .transform((v) => v === true || v === 'true' || v === '1' || v === 'yes');

/** Settings of one IMAP retriever (TRAWL_IMAP_* variables; see docs/mail-ingestion.md). */
export const ImapSettings = z
  .object({
    host: z.string().min(1),
    port: z.coerce.number().int().min(1).max(65_535).optional(),
    /** Implicit TLS (993). false: plain connection, upgraded with STARTTLS when the server offers it. */
    secure: bool.default(true),
    /** Verify the server's certificate (default true). */
    tls_reject_unauthorized: bool.default(true),
    user: z.string().min(1),
    /** `password` (LOGIN) or `oauth2` (XOAUTH2 / OAUTHBEARER with an access token). */
    auth: z.enum(['password', 'oauth2']).default('password'),
    password: z.string().min(1).optional(),
    /**
     * OAuth 2.0 (auth=oauth2), docs/mail-ingestion.md: the token endpoint and one credential:
     * a client secret or a certificate with its key (Microsoft 365, app-only), a Google service
     * account key (acting as `user` through domain-wide delegation), or a refresh token.
     */
    oauth_token_url: z.url().optional(),
    oauth_client_id: z.string().min(1).optional(),
    oauth_client_secret: z.string().min(1).optional(),
    oauth_certificate: z.string().min(1).optional(),
    oauth_private_key: z.string().min(1).optional(),
    oauth_service_account_key: ServiceAccountKeyJson.optional(),
    oauth_refresh_token: z.string().min(1).optional(),
    /** Default: Microsoft's https://outlook.office365.com/.default, Google's https://mail.google.com/. */
    oauth_scope: z.string().min(1).optional(),
    mailbox: z.string().min(1).default('INBOX'),
    /** Folder paths use '/' between levels whatever the server's delimiter. */
    processed_folder: z.string().min(1).default('Trawl/Processed'),
    quarantine_folder: z.string().min(1).default('Trawl/Quarantine'),
    /**
     * Where messages Trawl could not analyse go (`unanalyzed` verdicts: refused by the gateway, or
     * their analysis failed): held for a person, never with clean mail.
     */
    hold_folder: z.string().min(1).default('Trawl/Unanalyzed'),
    /**
     * The mailbox's address, handed to Trawl as the envelope recipient (used only when a message's
     * headers name no recipient, as for a Bcc copy). Default: the user when it is an address.
     */
    address: EnvelopeAddress.optional(),
    /** Keyword set on messages the verdict says to allow (empty: none). */
    clean_keyword: z.string().default('$TrawlClean'),
  })
  .superRefine((s, ctx) => {
    if (s.auth === 'password' && !s.password)
      ctx.addIssue({
        code: 'custom',
        path: ['password'],
        message: 'is required with password auth',
      });
    if (s.auth === 'oauth2') {
      const key = s.oauth_service_account_key;
      if (!key && !s.oauth_client_id)
        ctx.addIssue({
          code: 'custom',
          path: ['oauth_client_id'],
          message: 'oauth2 needs a client id (or a service account key)',
        });
      if (!key && !s.oauth_client_secret && !s.oauth_certificate && !s.oauth_refresh_token)
        ctx.addIssue({
          code: 'custom',
          path: ['oauth_client_secret'],
          message: 'oauth2 needs a client secret, a certificate and key, or a refresh token',
        });
      if (!key && !s.oauth_token_url)
        ctx.addIssue({
          code: 'custom',
          path: ['oauth_token_url'],
          message: 'is required with oauth2',
        });
    }
  })
  .transform((s) => ({
    ...s,
    port: s.port ?? (s.secure ? 993 : 143),
    address: s.address ?? (EnvelopeAddress.safeParse(s.user).success ? s.user : undefined),
  }));
export type ImapSettings = z.output<typeof ImapSettings>;
/** The IMAP settings as written (defaults not yet applied). */
export type ImapSettingsInput = z.input<typeof ImapSettings>;

/** The variables main.ts reads, and the settings they fill. */
export const IMAP_ENV = {
  TRAWL_IMAP_HOST: 'host',
  TRAWL_IMAP_PORT: 'port',
  TRAWL_IMAP_SECURE: 'secure',
  TRAWL_IMAP_TLS_REJECT_UNAUTHORIZED: 'tls_reject_unauthorized',
  TRAWL_IMAP_USER: 'user',
  TRAWL_IMAP_AUTH: 'auth',
  TRAWL_IMAP_PASSWORD: 'password',
  TRAWL_IMAP_OAUTH_TOKEN_URL: 'oauth_token_url',
  TRAWL_IMAP_OAUTH_CLIENT_ID: 'oauth_client_id',
  TRAWL_IMAP_OAUTH_CLIENT_SECRET: 'oauth_client_secret',
  TRAWL_IMAP_OAUTH_CERTIFICATE: 'oauth_certificate',
  TRAWL_IMAP_OAUTH_PRIVATE_KEY: 'oauth_private_key',
  TRAWL_IMAP_OAUTH_SERVICE_ACCOUNT_KEY: 'oauth_service_account_key',
  TRAWL_IMAP_OAUTH_REFRESH_TOKEN: 'oauth_refresh_token',
  TRAWL_IMAP_OAUTH_SCOPE: 'oauth_scope',
  TRAWL_IMAP_MAILBOX: 'mailbox',
  TRAWL_IMAP_PROCESSED_FOLDER: 'processed_folder',
  TRAWL_IMAP_QUARANTINE_FOLDER: 'quarantine_folder',
  TRAWL_IMAP_HOLD_FOLDER: 'hold_folder',
  TRAWL_IMAP_ADDRESS: 'address',
  TRAWL_IMAP_CLEAN_KEYWORD: 'clean_keyword',
} as const;

/** The secrets that may be given as files (`NAME_FILE`). */
export const IMAP_SECRET_FILES = [
  'TRAWL_IMAP_PASSWORD',
  'TRAWL_IMAP_OAUTH_CLIENT_SECRET',
  'TRAWL_IMAP_OAUTH_CERTIFICATE',
  'TRAWL_IMAP_OAUTH_PRIVATE_KEY',
  'TRAWL_IMAP_OAUTH_SERVICE_ACCOUNT_KEY',
  'TRAWL_IMAP_OAUTH_REFRESH_TOKEN',
] as const;

/** Settings from environment variables; problems name the variable. */
export const imapSettingsFromEnv = settingsReader(IMAP_ENV, ImapSettings, {
  secretFiles: IMAP_SECRET_FILES,
});

const MICROSOFT_IMAP_SCOPE = 'https://outlook.office365.com/.default';
const GOOGLE_IMAP_SCOPE = 'https://mail.google.com/';

/** The OAuth 2.0 grant of auth=oauth2 (undefined with password auth). */
export function imapOAuthGrant(s: ImapSettings): OAuthGrantInput | undefined {
  if (s.auth !== 'oauth2') return undefined;
  const key = s.oauth_service_account_key;
  if (key)
    return {
      kind: 'service_account',
      token_url: s.oauth_token_url ?? key.token_uri ?? 'https://oauth2.googleapis.com/token',
      client_email: key.client_email,
      private_key: key.private_key,
      ...(key.private_key_id ? { private_key_id: key.private_key_id } : {}),
      scope: s.oauth_scope ?? GOOGLE_IMAP_SCOPE,
      subject: s.user,
    };
  const common = { token_url: s.oauth_token_url ?? '', client_id: s.oauth_client_id ?? '' };
  if (s.oauth_refresh_token)
    return {
      kind: 'refresh_token',
      ...common,
      refresh_token: s.oauth_refresh_token,
      ...(s.oauth_client_secret ? { client_secret: s.oauth_client_secret } : {}),
      ...(s.oauth_scope ? { scope: s.oauth_scope } : {}),
    };
  if (s.oauth_certificate && s.oauth_private_key)
    return {
      kind: 'client_certificate',
      ...common,
      certificate: s.oauth_certificate,
      private_key: s.oauth_private_key,
      scope: s.oauth_scope ?? MICROSOFT_IMAP_SCOPE,
    };
  return {
    kind: 'client_secret',
    ...common,
    client_secret: s.oauth_client_secret ?? '',
    scope: s.oauth_scope ?? MICROSOFT_IMAP_SCOPE,
  };
}
