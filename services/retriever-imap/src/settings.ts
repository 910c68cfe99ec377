import { settingsReader } from '@trawl/config';
import { EnvelopeAddress } from '@trawl/contracts';
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
    password: z.string().min(1),
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
  .transform((s) => ({
    ...s,
    port: s.port ?? (s.secure ? 993 : 143),
    address: s.address ?? (EnvelopeAddress.safeParse(s.user).success ? s.user : undefined),
  }));
export type ImapSettings = z.output<typeof ImapSettings>;
export type ImapSettingsInput = z.input<typeof ImapSettings>;

/** The variables main.ts reads, and the settings they fill. */
export const IMAP_ENV = {
  TRAWL_IMAP_HOST: 'host',
  TRAWL_IMAP_PORT: 'port',
  TRAWL_IMAP_SECURE: 'secure',
  TRAWL_IMAP_TLS_REJECT_UNAUTHORIZED: 'tls_reject_unauthorized',
  TRAWL_IMAP_USER: 'user',
  TRAWL_IMAP_PASSWORD: 'password',
  TRAWL_IMAP_MAILBOX: 'mailbox',
  TRAWL_IMAP_PROCESSED_FOLDER: 'processed_folder',
  TRAWL_IMAP_QUARANTINE_FOLDER: 'quarantine_folder',
  TRAWL_IMAP_HOLD_FOLDER: 'hold_folder',
  TRAWL_IMAP_ADDRESS: 'address',
  TRAWL_IMAP_CLEAN_KEYWORD: 'clean_keyword',
} as const;

/** Settings from environment variables; problems name the variable. */
export const imapSettingsFromEnv = settingsReader(IMAP_ENV, ImapSettings);
