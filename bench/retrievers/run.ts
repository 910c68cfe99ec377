/**
 * Retrievers benchmark (`pnpm bench:retrievers`): messages per second each retriever fetches and
 * acks, and verdicts per second it applies, through its HTTP protocol (what the mail orchestrator
 * calls), in the same run:
 *  - `imap`:  services/retriever-imap on Debian's Dovecot (the baseline; password login);
 *  - `graph`: services/retriever-graph on the local Microsoft Graph and token server;
 *  - `gmail`: services/retriever-gmail on the local Gmail API (a service account's JWT grant).
 * Each: BENCH_RETRIEVERS_MESSAGES (default 300) messages put in the mailbox, then fetched by
 * batches of 50 and acked (`fetch+ack`), then one verdict each, 4 at a time (`verdicts`:
 * quarantine, flag, review, allow in turn). The local API servers run in this process, so their
 * own work is in the figures: they compare the retrievers' protocols and round trips here, not
 * the cloud's latency. Without Dovecot (root and dovecot-imapd) the IMAP row is skipped.
 */
import type { AnalysisResult, RecommendedAction } from '@trawl/contracts';
import { startTestTokenServer, testKeyPair } from '@trawl/oauth/testing';
import { createServiceLogger } from '@trawl/platform';
import { GmailSettings, startRetrieverGmail } from '@trawl/retriever-gmail';
import { startTestGmailServer } from '@trawl/retriever-gmail/testing';
import { GraphSettings, startRetrieverGraph } from '@trawl/retriever-graph';
import { startTestGraphServer } from '@trawl/retriever-graph/testing';
import { createImapRetriever, ImapSettings } from '@trawl/retriever-imap';
import { dovecotAvailable, inspector, startTestDovecot } from '@trawl/retriever-imap/testing';

const N = Math.max(1, Number(process.env.BENCH_RETRIEVERS_MESSAGES ?? 300));
const BATCH = 50;
const KEY = 'bench-retriever-key-0123456789abcdef';
const silent = createServiceLogger('bench-retrievers', 'silent');
const headers = { 'x-internal-api-key': KEY };
const ACTIONS: RecommendedAction[] = ['quarantine', 'flag', 'review', 'allow'];

interface Injectable {
  inject(o: {
    method: 'POST';
    url: string;
    headers: Record<string, string>;
    payload: object;
  }): Promise<{
    statusCode: number;
    json(): unknown;
  }>;
}

function mail(i: number, to: string): string {
  return [
    'From: "Account Security" <security@paypa1-verify.example>',
    `To: ${to}`,
    `Subject: Bench report ${i}`,
    `Message-ID: <bench-${i}-${Date.now()}@example.test>`,
    'Date: Wed, 01 May 2024 10:00:00 +0000',
    '',
    `Verify your account: http://paypa1-verify.example/${i} ${'lorem ipsum '.repeat(200)}`,
    '',
  ].join('\r\n');
}

function result(action: RecommendedAction): AnalysisResult {
  return {
    is_phishing: action !== 'allow',
    threat_level: action === 'allow' ? 'none' : 'high',
    confidence: 0.9,
    summary: action,
    recommended_action: action,
    indicators: [],
  };
}

async function post(app: Injectable, url: string, payload: object) {
  const r = await app.inject({ method: 'POST', url, headers, payload });
  if (r.statusCode !== 200)
    throw new Error(`${url} answered ${r.statusCode}: ${JSON.stringify(r.json())}`);
  return r.json() as { messages?: { id: string }[] };
}

/** fetch+ack msgs/s and verdicts/s of one retriever's app. */
async function measure(app: Injectable): Promise<{ fetch: number; verdicts: number }> {
  const ids: string[] = [];
  const t0 = performance.now();
  while (ids.length < N) {
    const got = (await post(app, '/internal/fetch', { max_messages: BATCH })).messages ?? [];
    if (got.length === 0) throw new Error(`only ${ids.length} of ${N} messages came`);
    await post(app, '/internal/ack', { ids: got.map((m) => m.id) });
    ids.push(...got.map((m) => m.id));
  }
  const fetchSeconds = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (;;) {
        const i = next++;
        if (i >= ids.length) return;
        await post(app, '/internal/verdict', {
          id: ids[i] as string,
          job_id: `bench-${i}`,
          result: result(ACTIONS[i % 4] as RecommendedAction),
        });
      }
    }),
  );
  const verdictSeconds = (performance.now() - t1) / 1000;
  return { fetch: N / fetchSeconds, verdicts: N / verdictSeconds };
}

const rows: { name: string; fetch: number; verdicts: number }[] = [];

if (dovecotAvailable()) {
  const d = await startTestDovecot();
  try {
    const box = await inspector(d);
    for (let i = 0; i < N; i++) await box.append(mail(i, 'reports@example.test'));
    await box.close();
    const s = createImapRetriever(
      ImapSettings.parse({
        host: d.host,
        port: d.port,
        secure: false,
        user: d.user,
        password: d.password,
      }),
      { logger: silent, internalApiKey: KEY },
    );
    await s.startAndWait();
    try {
      rows.push({ name: 'imap (Dovecot)', ...(await measure(s.app)) });
    } finally {
      await s.stop();
    }
  } finally {
    await d.destroy();
  }
} else {
  console.log('imap row skipped: needs Debian dovecot-imapd and root');
}

const ts = await startTestTokenServer();
try {
  const graph = await startTestGraphServer(ts);
  ts.registerApp({ tenant: 'bench', clientId: 'bench-app', secret: 'bench-secret-value' });
  graph.addMailbox('reports@contoso.example');
  for (let i = 0; i < N; i++)
    graph.deliver('reports@contoso.example', mail(i, 'reports@contoso.example'));
  const g = await startRetrieverGraph(
    { logger: silent },
    {
      graph: GraphSettings.parse({
        tenant_id: 'bench',
        client_id: 'bench-app',
        client_secret: 'bench-secret-value',
        authority: ts.url,
        graph_url: graph.graphUrl,
        mailboxes: 'reports@contoso.example',
      }),
      host: '127.0.0.1',
      port: 0,
      internalApiKey: KEY,
    },
  );
  try {
    rows.push({ name: 'graph (local Graph)', ...(await measure(g.app)) });
  } finally {
    await g.close();
    await graph.close();
  }

  const gmail = await startTestGmailServer(ts);
  const key = testKeyPair();
  ts.registerServiceAccount({
    email: 'bench@project.iam.example',
    publicKeyPem: key.publicKeyPem,
    delegate: [
      { subject: 'reports@corp.example', scopes: ['https://www.googleapis.com/auth/gmail.modify'] },
    ],
  });
  gmail.addMailbox('reports@corp.example');
  for (let i = 0; i < N; i++)
    gmail.deliver('reports@corp.example', mail(i, 'reports@corp.example'));
  const m = await startRetrieverGmail(
    { logger: silent },
    {
      gmail: GmailSettings.parse({
        service_account_key: JSON.stringify({
          client_email: 'bench@project.iam.example',
          private_key: key.privateKeyPem,
          token_uri: ts.googleTokenUrl,
        }),
        gmail_url: gmail.gmailUrl,
        mailboxes: 'reports@corp.example',
      }),
      host: '127.0.0.1',
      port: 0,
      internalApiKey: KEY,
    },
  );
  try {
    rows.push({ name: 'gmail (local Gmail API)', ...(await measure(m.app)) });
  } finally {
    await m.close();
    await gmail.close();
  }
} finally {
  await ts.close();
}

const base = rows.find((r) => r.name.startsWith('imap'));
console.log(`\nretrievers, ${N} messages each (fetch by ${BATCH} + ack; verdicts 4 at a time)`);
console.log('retriever                  fetch+ack msg/s   verdicts/s   vs imap (fetch, verdicts)');
for (const r of rows) {
  const ratio = base
    ? `${(r.fetch / base.fetch).toFixed(2)}x, ${(r.verdicts / base.verdicts).toFixed(2)}x`
    : 'n/a';
  console.log(
    `${r.name.padEnd(26)} ${r.fetch.toFixed(1).padStart(15)} ${r.verdicts.toFixed(1).padStart(12)}   ${ratio}`,
  );
}
