import { type AppConfig, ConfigError, exitWithProblems } from '@trawl/config';
import { deriveCredential, type MailRetrievers } from '@trawl/contracts';
import type { Cache } from '@trawl/platform';
import {
  type GmailSettings,
  gmailSettingsFromEnv,
  retrieverGmailSettings,
  startRetrieverGmail,
} from '@trawl/retriever-gmail';
import {
  type GraphSettings,
  graphSettingsFromEnv,
  retrieverGraphSettings,
  startRetrieverGraph,
} from '@trawl/retriever-graph';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';

/** The API retrievers embedded mode runs in-process (each when its mailboxes are named). */
export interface EmbeddedRetrievers {
  graph?: GraphSettings;
  gmail?: GmailSettings;
}

/**
 * For main.ts: the Graph retriever's settings when TRAWL_GRAPH_MAILBOXES is set, the Gmail
 * retriever's when TRAWL_GMAIL_MAILBOXES is; a problem in either stops the start, naming it.
 */
export function embeddedRetrieversFromEnv(
  env: Record<string, string | undefined>,
): EmbeddedRetrievers {
  const out: EmbeddedRetrievers = {};
  const problems: string[] = [];
  if (env.TRAWL_GRAPH_MAILBOXES) {
    const r = graphSettingsFromEnv(env);
    if (r.ok) out.graph = r.value;
    else problems.push(...r.problems);
  }
  if (env.TRAWL_GMAIL_MAILBOXES) {
    const r = gmailSettingsFromEnv(env);
    if (r.ok) out.gmail = r.value;
    else problems.push(...r.problems);
  }
  if (problems.length > 0)
    exitWithProblems(
      new ConfigError(
        problems.map((p) => {
          const [path, ...rest] = p.split(': ');
          return { path: path ?? '', message: rest.join(': ') };
        }),
      ),
    );
  return out;
}

/**
 * Starts the configured API retrievers through their own assemblies, each as its own retriever
 * (credential derived from the internal key under its name, as `trawl credentials retriever`
 * does), and answers the TRAWL_MAIL_RETRIEVERS entries that poll them: `graph` and `gmail`,
 * reporting mailboxes (`report: true`) unless an entry of that name says otherwise.
 */
export async function startEmbeddedRetrievers(
  cfg: AppConfig,
  which: EmbeddedRetrievers,
  ports: { logger: Logger; cache: Cache; version: string; registries: Registry[] },
): Promise<{ entries: MailRetrievers; close(): Promise<void> }> {
  const closers: (() => Promise<void>)[] = [];
  const entries: MailRetrievers = {};
  const key = cfg.internalApiKey;
  const entry = (name: string, url: string) => ({
    priority: 0,
    enabled: true,
    report: true,
    ...cfg.mailRetrievers[name],
    url,
  });
  try {
    if (which.graph && key) {
      const s = await startRetrieverGraph(
        { logger: ports.logger, cache: ports.cache, version: ports.version },
        {
          ...retrieverGraphSettings(cfg, which.graph),
          internalApiKey: deriveCredential(key, { kind: 'retriever', id: 'graph' }),
        },
      );
      closers.push(() => s.close());
      ports.registries.push(s.registry);
      entries.graph = entry('graph', s.url);
    }
    if (which.gmail && key) {
      const s = await startRetrieverGmail(
        { logger: ports.logger, cache: ports.cache, version: ports.version },
        {
          ...retrieverGmailSettings(cfg, which.gmail),
          internalApiKey: deriveCredential(key, { kind: 'retriever', id: 'gmail' }),
        },
      );
      closers.push(() => s.close());
      ports.registries.push(s.registry);
      entries.gmail = entry('gmail', s.url);
    }
  } catch (err) {
    for (const c of closers.reverse()) await c().catch(() => undefined);
    throw err;
  }
  return {
    entries,
    async close() {
      for (const c of closers.reverse()) await c();
    },
  };
}
