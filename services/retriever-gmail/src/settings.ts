import { type AppConfig, settingsReader } from '@trawl/config';
import { apiRetrieverFields, mailboxList } from '@trawl/mailbox-sync';
import { ServiceAccountKeyJson } from '@trawl/oauth';
import { z } from 'zod';

/** Settings of the Gmail API retriever (TRAWL_GMAIL_*; docs/mail-ingestion.md). */
export const GmailSettings = z
  .object({
    /** A service account's JSON key (domain-wide delegation), or a user's OAuth client below. */
    service_account_key: ServiceAccountKeyJson.optional(),
    client_id: z.string().min(1).optional(),
    client_secret: z.string().min(1).optional(),
    refresh_token: z.string().min(1).optional(),
    token_url: z.url().optional(),
    gmail_url: z.url().default('https://gmail.googleapis.com/gmail/v1'),
    scope: z.string().default('https://www.googleapis.com/auth/gmail.modify'),
    /** The reporting mailboxes (with a user's refresh token: that user's address only). */
    mailboxes: mailboxList(/^[^\s:/@]+@[^\s:/@]+$/, 'an address'),
    /** The watched label. */
    label: z.string().min(1).default('INBOX'),
    /** The label acked messages get instead of the watched one. */
    processed_label: z.string().min(1).default('Trawl/Processed'),
    ...apiRetrieverFields({ pageSize: 100, maxPageSize: 500, maxConcurrency: 16, name: 'gmail' }),
  })
  .superRefine((s, ctx) => {
    const user = s.client_id && s.refresh_token;
    if (!s.service_account_key && !user)
      ctx.addIssue({
        code: 'custom',
        path: ['service_account_key'],
        message: "set a service account key, or a user's client id and refresh token",
      });
    if (!s.service_account_key && user && s.mailboxes.length !== 1)
      ctx.addIssue({
        code: 'custom',
        path: ['mailboxes'],
        message: "a user's refresh token reaches that user's mailbox only: name exactly one",
      });
  });
export type GmailSettings = z.output<typeof GmailSettings>;
/** The Gmail settings as written (defaults not yet applied). */
export type GmailSettingsInput = z.input<typeof GmailSettings>;

/** The environment variables of the Gmail settings, and the setting each sets. */
export const GMAIL_ENV = {
  TRAWL_GMAIL_SERVICE_ACCOUNT_KEY: 'service_account_key',
  TRAWL_GMAIL_CLIENT_ID: 'client_id',
  TRAWL_GMAIL_CLIENT_SECRET: 'client_secret',
  TRAWL_GMAIL_REFRESH_TOKEN: 'refresh_token',
  TRAWL_GMAIL_TOKEN_URL: 'token_url',
  TRAWL_GMAIL_URL: 'gmail_url',
  TRAWL_GMAIL_MAILBOXES: 'mailboxes',
  TRAWL_GMAIL_LABEL: 'label',
  TRAWL_GMAIL_PROCESSED_LABEL: 'processed_label',
  TRAWL_GMAIL_VERDICT_RULES: 'verdict_rules',
  TRAWL_GMAIL_PAGE_SIZE: 'page_size',
  TRAWL_GMAIL_CONCURRENCY: 'concurrency',
  TRAWL_GMAIL_NAME: 'name',
} as const;

/** The Gmail settings that may be read from files (secrets). */
export const GMAIL_SECRET_FILES = [
  'TRAWL_GMAIL_SERVICE_ACCOUNT_KEY',
  'TRAWL_GMAIL_CLIENT_SECRET',
  'TRAWL_GMAIL_REFRESH_TOKEN',
] as const;

/** Reads the Gmail settings from the environment. */
export const gmailSettingsFromEnv = settingsReader(GMAIL_ENV, GmailSettings, {
  secretFiles: GMAIL_SECRET_FILES,
});

/** The Gmail retriever's settings: its Gmail settings and where it listens. */
export interface RetrieverGmailSettings {
  gmail: GmailSettings;
  host: string;
  port: number;
  internalApiKey: string | undefined;
}

/** The one place the Gmail retriever's settings come from (both shapes call it). */
export function retrieverGmailSettings(
  cfg: Pick<AppConfig, 'retrieverGmail' | 'retrieverKey'>,
  gmail: GmailSettings,
): RetrieverGmailSettings {
  return {
    gmail,
    host: cfg.retrieverGmail.host,
    port: cfg.retrieverGmail.port,
    internalApiKey: cfg.retrieverKey,
  };
}
