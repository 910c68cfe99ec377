import { mkdtempSync, rmSync } from 'node:fs';

import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findRepoRoot, loadConfig } from '@trawl/config';
import { startTestTokenServer, type TestTokenServer } from '@trawl/oauth/testing';
import { freePort } from '@trawl/platform/testing';
import { GraphSettings } from '@trawl/retriever-graph';
import { startTestGraphServer, type TestGraphServer } from '@trawl/retriever-graph/testing';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Embedded, startEmbedded } from '../../src/index.ts';

const PASSWORD = 'Correct-Horse-Battery-9';
const BOX = 'phishing@contoso.example';
const work = mkdtempSync(join(tmpdir(), 'trawl-embedded-graph-'));

describe('embedded mode runs the Graph retriever through its own assembly', () => {
  let ts: TestTokenServer;
  let graph: TestGraphServer;
  let e: Embedded;

  beforeAll(async () => {
    ts = await startTestTokenServer();
    graph = await startTestGraphServer(ts);
    ts.registerApp({ tenant: 't1', clientId: 'app', secret: 'app-secret-value' });
    graph.addMailbox(BOX);
    const cfg = loadConfig({
      env: {
        APP_ENV: 'dev',
        TRAWL_DATA_DIR: join(work, 'data'),
        TRAWL_ANALYSIS_WORKERS: '0',
        TRAWL_ADMIN_USER: 'admin',
        TRAWL_ADMIN_PASSWORD: PASSWORD,
        INTERNAL_API_KEY: 'internal-key-for-tests-0123456789',
        TRAWL_RETRIEVER_GRAPH_PORT: String(await freePort()),
        TRAWL_MAIL_ORCHESTRATOR_PORT: String(await freePort()),
      },
      envFile: false,
      rootDir: findRepoRoot(),
      needs: { postgres: false, rabbitmq: false, redis: false, secretKey: true },
    });
    e = await startEmbedded(cfg, {
      port: 0,
      logger: pino({ level: 'silent' }),
      retrievers: {
        graph: GraphSettings.parse({
          tenant_id: 't1',
          client_id: 'app',
          client_secret: 'app-secret-value',
          authority: ts.url,
          graph_url: graph.graphUrl,
          mailboxes: BOX,
        }),
      },
    });
  }, 120_000);

  afterAll(async () => {
    await e?.close();
    await graph?.close();
    await ts?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('a message in the mailbox becomes a job, and the mailbox gets its verdict', {
    timeout: 120_000,
  }, async () => {
    expect(e.mail).toBe(true);
    graph.deliver(
      BOX,
      [
        'From: "IT Desk" <helpdesk@micros0ft-support.example>',
        `To: ${BOX}`,
        'Subject: Password expires today',
        'Message-ID: <embedded-1@micros0ft-support.example>',
        'Date: Wed, 01 May 2024 10:00:00 +0000',
        '',
        'Keep your password: http://micros0ft-support.example/keep',
        '',
      ].join('\r\n'),
    );
    const token = (
      (await (
        await fetch(`${e.url}/auth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ grant_type: 'password', username: 'admin', password: PASSWORD }),
        })
      ).json()) as { access_token: string }
    ).access_token;
    const until = Date.now() + 90_000;
    for (;;) {
      const list = (await (
        await fetch(`${e.url}/api/v1/analyze?limit=10`, {
          headers: { authorization: `Bearer ${token}` },
        })
      ).json()) as { items: { status: string }[] };
      const done = graph
        .folder(BOX, 'Trawl/Processed')
        .concat(graph.folder(BOX, 'Trawl/Quarantine'))
        .some((m) => m.categories.length > 0);
      if (list.items.some((j) => j.status === 'completed') && done) break;
      if (Date.now() > until) throw new Error('no completed job with its verdict in the mailbox');
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(graph.folder(BOX, 'Inbox')).toEqual([]);
  });
});
