import {
  type ApiRetrieverPorts,
  type ApiRetrieverService,
  createApiRetrieverMetrics,
  ruleTargets,
  runApiRetriever,
  type VerdictRules,
} from '@trawl/mailbox-sync';
import { createApiClient, createTokenSource, type OAuthGrantInput } from '@trawl/oauth';
import { serviceChild } from '@trawl/platform';
import { Registry } from 'prom-client';
import { buildApp } from './app.ts';
import { GRAPH_ERRORS } from './errors.ts';
import { GraphMailbox } from './graph-mailbox.ts';
import type { GraphSettings, RetrieverGraphSettings } from './settings.ts';

/** What the verdicts do unless TRAWL_GRAPH_VERDICT_RULES says otherwise. */
export const GRAPH_DEFAULT_RULES = {
  quarantine: { move_to: 'Trawl/Quarantine', tags: ['Trawl: phishing'], flag: false },
  flag: { tags: ['Trawl: phishing'], flag: true },
  review: { tags: ['Trawl: review'], flag: true },
  allow: { tags: ['Trawl: clean'], flag: false },
  unanalyzed: {
    move_to: 'Trawl/Unanalyzed',
    tags: ['Trawl: unanalyzed', 'Trawl: review'],
    flag: true,
  },
} satisfies VerdictRules;

/** The ports of the Graph retriever's assembly. */
export type RetrieverGraphPorts = ApiRetrieverPorts;
/** A started Graph retriever. */
export type RetrieverGraphService = ApiRetrieverService;

/** The token grant of the settings: a client secret, or the certificate's client assertion. */
export function graphGrant(g: GraphSettings): OAuthGrantInput {
  const token_url = `${g.authority.replace(/\/+$/, '')}/${encodeURIComponent(g.tenant_id)}/oauth2/v2.0/token`;
  if (g.certificate && g.private_key)
    return {
      kind: 'client_certificate',
      token_url,
      client_id: g.client_id,
      certificate: g.certificate,
      private_key: g.private_key,
      scope: g.scope,
    };
  return {
    kind: 'client_secret',
    token_url,
    client_id: g.client_id,
    client_secret: g.client_secret ?? '',
    scope: g.scope,
  };
}

/** The Graph retriever, running: its mailboxes, its sync state, the protocol served. */
export async function startRetrieverGraph(
  ports: RetrieverGraphPorts,
  settings: RetrieverGraphSettings,
): Promise<RetrieverGraphService> {
  const g = settings.graph;
  const registry = ports.registry ?? new Registry();
  const metrics = createApiRetrieverMetrics(registry, 'graph');
  const logger = serviceChild(ports.logger, 'retriever-graph');
  const tokens = createTokenSource(graphGrant(g), ports.fetch ? { fetch: ports.fetch } : {});
  const rules = g.verdict_rules ?? {};
  const ruleFolders = ruleTargets(GRAPH_DEFAULT_RULES, rules).folders;
  const sources = g.mailboxes.map(
    (mailbox) =>
      new GraphMailbox(
        createApiClient({
          baseUrl: g.graph_url,
          tokens,
          concurrency: g.concurrency,
          timeoutMs: g.request_timeout_ms,
          maxBytes: 4 * 1024 * 1024,
          onThrottled: () => metrics.throttled.inc(),
          ...(ports.fetch ? { fetch: ports.fetch } : {}),
        }),
        mailbox,
        {
          folder: g.folder,
          processedFolder: g.processed_folder,
          pageSize: g.page_size,
          maxMessageBytes: g.max_message_bytes,
          ruleFolders,
        },
      ),
  );
  return runApiRetriever(ports, {
    kind: 'graph',
    name: g.name,
    sources,
    rules,
    defaults: GRAPH_DEFAULT_RULES,
    unknownIdCode: GRAPH_ERRORS.messageNotFound,
    registry,
    metrics,
    logger,
    buildApp,
    listen: { host: settings.host, port: settings.port },
    internalApiKey: settings.internalApiKey,
    describe: { mailboxes: g.mailboxes.length, grant: tokens.kind },
  });
}
