import { type AppConfig, settingsReader } from '@trawl/config';
import { apiRetrieverFields, mailboxList } from '@trawl/mailbox-sync';
import { z } from 'zod';

/** Settings of the Microsoft Graph retriever (TRAWL_GRAPH_*; docs/mail-ingestion.md). */
export const GraphSettings = z
  .object({
    tenant_id: z.string().min(1),
    client_id: z.string().min(1),
    /** Either a client secret, or a certificate and its private key (PEM). */
    client_secret: z.string().min(1).optional(),
    certificate: z.string().min(1).optional(),
    private_key: z.string().min(1).optional(),
    authority: z.url().default('https://login.microsoftonline.com'),
    graph_url: z.url().default('https://graph.microsoft.com/v1.0'),
    scope: z.string().default('https://graph.microsoft.com/.default'),
    /** The reporting mailboxes (addresses or user ids), comma-separated. */
    mailboxes: mailboxList(/^[^\s:/]+$/, 'a mailbox address or id'),
    /** The watched folder: a well-known name (inbox) or a folder id. */
    folder: z.string().min(1).default('inbox'),
    /** Where acked messages go (a path under the mailbox root, '/' between levels). */
    processed_folder: z.string().min(1).default('Trawl/Processed'),
    ...apiRetrieverFields({ pageSize: 50, maxPageSize: 1000, maxConcurrency: 4, name: 'graph' }),
  })
  .superRefine((s, ctx) => {
    if (!s.client_secret && !(s.certificate && s.private_key))
      ctx.addIssue({
        code: 'custom',
        path: ['client_secret'],
        message: 'set a client secret, or a certificate and its private key',
      });
  });
export type GraphSettings = z.output<typeof GraphSettings>;
/** The Graph settings as written (defaults not yet applied). */
export type GraphSettingsInput = z.input<typeof GraphSettings>;

/** The environment variables of the Graph settings, and the setting each sets. */
export const GRAPH_ENV = {
  TRAWL_GRAPH_TENANT_ID: 'tenant_id',
  TRAWL_GRAPH_CLIENT_ID: 'client_id',
  TRAWL_GRAPH_CLIENT_SECRET: 'client_secret',
  TRAWL_GRAPH_CERTIFICATE: 'certificate',
  TRAWL_GRAPH_PRIVATE_KEY: 'private_key',
  TRAWL_GRAPH_AUTHORITY: 'authority',
  TRAWL_GRAPH_URL: 'graph_url',
  TRAWL_GRAPH_MAILBOXES: 'mailboxes',
  TRAWL_GRAPH_FOLDER: 'folder',
  TRAWL_GRAPH_PROCESSED_FOLDER: 'processed_folder',
  TRAWL_GRAPH_VERDICT_RULES: 'verdict_rules',
  TRAWL_GRAPH_PAGE_SIZE: 'page_size',
  TRAWL_GRAPH_CONCURRENCY: 'concurrency',
  TRAWL_GRAPH_NAME: 'name',
} as const;

/** The secrets that may be given as files (`NAME_FILE`). */
export const GRAPH_SECRET_FILES = [
  'TRAWL_GRAPH_CLIENT_SECRET',
  'TRAWL_GRAPH_CERTIFICATE',
  'TRAWL_GRAPH_PRIVATE_KEY',
] as const;

/** Reads the Graph settings from the environment. */
export const graphSettingsFromEnv = settingsReader(GRAPH_ENV, GraphSettings, {
  secretFiles: GRAPH_SECRET_FILES,
});

/** Everything the assembly needs: the mailbox settings and where the protocol is served. */
export interface RetrieverGraphSettings {
  graph: GraphSettings;
  host: string;
  port: number;
  internalApiKey: string | undefined;
}

/** The one place the Graph retriever's settings come from (both shapes call it). */
export function retrieverGraphSettings(
  cfg: Pick<AppConfig, 'retrieverGraph' | 'retrieverKey'>,
  graph: GraphSettings,
): RetrieverGraphSettings {
  return {
    graph,
    host: cfg.retrieverGraph.host,
    port: cfg.retrieverGraph.port,
    internalApiKey: cfg.retrieverKey,
  };
}
