import {
  type ApiRetrieverPorts,
  type ApiRetrieverService,
  createApiRetrieverMetrics,
  ruleTargets,
  runApiRetriever,
  type VerdictRules,
} from '@trawl/mailbox-sync';
import {
  createApiClient,
  createTokenSource,
  type OAuthGrantInput,
  type TokenSource,
} from '@trawl/oauth';
import { serviceChild } from '@trawl/platform';
import { Registry } from 'prom-client';
import { buildApp } from './app.ts';
import { GMAIL_ERRORS } from './errors.ts';
import { GmailMailbox, gmailThrottled } from './gmail-mailbox.ts';
import type { GmailSettings, RetrieverGmailSettings } from './settings.ts';

/** What the verdicts do unless TRAWL_GMAIL_VERDICT_RULES says otherwise ("moves" are labels). */
export const GMAIL_DEFAULT_RULES = {
  quarantine: { move_to: 'Trawl/Quarantine', tags: ['Trawl/Phishing'], flag: false },
  flag: { tags: ['Trawl/Phishing'], flag: true },
  review: { tags: ['Trawl/Review'], flag: true },
  allow: { tags: ['Trawl/Clean'], flag: false },
  unanalyzed: { move_to: 'Trawl/Unanalyzed', tags: ['Trawl/Review'], flag: true },
} satisfies VerdictRules;

const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/** The ports of the Gmail retriever's assembly. */
export type RetrieverGmailPorts = ApiRetrieverPorts;
/** A started Gmail retriever. */
export type RetrieverGmailService = ApiRetrieverService;

/** The grant for one mailbox: the service account acting as it, or the user's refresh token. */
export function gmailGrant(g: GmailSettings, mailbox: string): OAuthGrantInput {
  const key = g.service_account_key;
  if (key)
    return {
      kind: 'service_account',
      token_url: g.token_url ?? key.token_uri ?? GOOGLE_TOKEN_URL,
      client_email: key.client_email,
      private_key: key.private_key,
      ...(key.private_key_id ? { private_key_id: key.private_key_id } : {}),
      scope: g.scope,
      subject: mailbox,
    };
  return {
    kind: 'refresh_token',
    token_url: g.token_url ?? GOOGLE_TOKEN_URL,
    client_id: g.client_id ?? '',
    ...(g.client_secret ? { client_secret: g.client_secret } : {}),
    refresh_token: g.refresh_token ?? '',
  };
}

/** The Gmail retriever, running: its mailboxes, its sync state, the protocol served. */
export async function startRetrieverGmail(
  ports: RetrieverGmailPorts,
  settings: RetrieverGmailSettings,
): Promise<RetrieverGmailService> {
  const g = settings.gmail;
  const registry = ports.registry ?? new Registry();
  const metrics = createApiRetrieverMetrics(registry, 'gmail');
  const logger = serviceChild(ports.logger, 'retriever-gmail');
  const rules = g.verdict_rules ?? {};
  const targets = ruleTargets(GMAIL_DEFAULT_RULES, rules);
  const fetchOpt = ports.fetch ? { fetch: ports.fetch } : {};
  const sources = g.mailboxes.map((mailbox) => {
    // Domain-wide delegation: one token per user (`sub`), each with its own quota.
    const tokens: TokenSource = createTokenSource(gmailGrant(g, mailbox), fetchOpt);
    return new GmailMailbox(
      createApiClient({
        baseUrl: g.gmail_url,
        tokens,
        concurrency: g.concurrency,
        timeoutMs: g.request_timeout_ms,
        maxBytes: 4 * 1024 * 1024,
        isThrottled: gmailThrottled,
        onThrottled: () => metrics.throttled.inc(),
        ...fetchOpt,
      }),
      mailbox,
      {
        label: g.label,
        processedLabel: g.processed_label,
        pageSize: g.page_size,
        maxMessageBytes: g.max_message_bytes,
        ruleLabels: [...new Set([...targets.folders, ...targets.tags])],
      },
    );
  });
  return runApiRetriever(ports, {
    kind: 'gmail',
    name: g.name,
    sources,
    rules,
    defaults: GMAIL_DEFAULT_RULES,
    unknownIdCode: GMAIL_ERRORS.messageNotFound,
    registry,
    metrics,
    logger,
    buildApp,
    listen: { host: settings.host, port: settings.port },
    internalApiKey: settings.internalApiKey,
    describe: {
      mailboxes: g.mailboxes.length,
      grant: g.service_account_key ? 'service_account' : 'refresh_token',
    },
  });
}
