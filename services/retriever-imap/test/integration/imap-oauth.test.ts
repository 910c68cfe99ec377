import {
  startTestTokenServer,
  type TestKeyPair,
  type TestTokenServer,
  testKeyPair,
} from '@trawl/oauth/testing';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DOVECOT_HINT, requireComponent } from '../../../../test/support/require-component.ts';
import {
  createImapRetriever,
  type ImapRetrieverService,
  ImapSettings,
  type ImapSettingsInput,
} from '../../src/index.ts';
import { inspector, mail } from '../../src/testing/imap-inspector.ts';
import { dovecotAvailable, startTestDovecot, type TestDovecot } from '../../src/testing/index.ts';

const KEY = 'internal-key-for-tests-0123456789';
const USER = 'reports@corp.example';
const SA = 'imap-reader@project.iam.example';
const silent = pino({ level: 'silent' });
const headers = { 'x-internal-api-key': KEY };

async function waitFor(fn: () => Promise<boolean>, what: string) {
  const until = Date.now() + 30_000;
  while (!(await fn())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!requireComponent('Dovecot', dovecotAvailable(), DOVECOT_HINT))(
  'IMAP with OAuth 2.0 against Dovecot (oauth2 passdb, introspection at a local token server)',
  () => {
    let ts: TestTokenServer;
    let sa: TestKeyPair;
    const dovecots: TestDovecot[] = [];
    const services: ImapRetrieverService[] = [];

    beforeAll(async () => {
      ts = await startTestTokenServer();
      sa = testKeyPair();
      ts.registerServiceAccount({
        email: SA,
        publicKeyPem: sa.publicKeyPem,
        delegate: [{ subject: USER, scopes: ['https://mail.google.com/'] }],
      });
      ts.registerRefreshToken({
        token: 'rt-reports',
        clientId: 'imap-client',
        clientSecret: 'imap-client-secret',
        subject: USER,
        scope: 'https://outlook.office365.com/IMAP.AccessAsUser.All',
      });
    });
    afterEach(async () => {
      for (const s of services.splice(0)) await s.stop();
      for (const d of dovecots.splice(0)) await d.destroy();
    });
    afterAll(async () => ts?.close());

    async function setup(mechanism: 'xoauth2' | 'oauthbearer', oauth: Partial<ImapSettingsInput>) {
      const d = await startTestDovecot({
        user: USER,
        oauth2: { introspectionUrl: ts.introspectionUrl, mechanisms: [mechanism] },
      });
      dovecots.push(d);
      const s = createImapRetriever(
        ImapSettings.parse({
          host: d.host,
          port: d.port,
          secure: false,
          user: USER,
          auth: 'oauth2',
          ...oauth,
        }),
        {
          logger: silent,
          internalApiKey: KEY,
          session: { reconnectInitialMs: 50, reconnectMaxMs: 300 },
        },
      );
      services.push(s);
      return { d, s };
    }

    const post = (s: ImapRetrieverService, url: string, payload: unknown) =>
      s.app.inject({ method: 'POST', url, headers, payload: payload as object });

    it('XOAUTH2 with a Google service account token (JWT bearer grant, sub = the mailbox)', async () => {
      const { d, s } = await setup('xoauth2', {
        oauth_service_account_key: JSON.stringify({
          client_email: SA,
          private_key: sa.privateKeyPem,
          token_uri: ts.googleTokenUrl,
        }),
      });
      await s.startAndWait();
      const insp = await inspector(d);
      await insp.append(mail(1));
      const f = await post(s, '/internal/fetch', { max_messages: 5 });
      expect(f.json().messages).toHaveLength(1);
      expect(
        (await post(s, '/internal/ack', { ids: [f.json().messages[0].id] })).json().acked,
      ).toBe(1);
      expect((await insp.contents('Trawl/Processed')).size).toBe(1);
      await insp.close();
    });

    it('OAUTHBEARER with a refresh token; a token the server no longer accepts is replaced on reconnect', async () => {
      const { d, s } = await setup('oauthbearer', {
        oauth_token_url: ts.googleTokenUrl,
        oauth_client_id: 'imap-client',
        oauth_client_secret: 'imap-client-secret',
        oauth_refresh_token: 'rt-reports',
      });
      await s.startAndWait();
      const issued = ts.stats.issued;
      // the server forgets every token, and drops the connection: the cached token is refused
      ts.expireAll();
      await d.stop();
      await d.start();
      await waitFor(
        async () => (await s.app.inject({ url: '/health' })).statusCode === 200,
        'reconnect',
      );
      expect(ts.stats.issued).toBeGreaterThan(issued);
      const insp = await inspector(d);
      await insp.append(mail(2));
      expect((await post(s, '/internal/fetch', { max_messages: 5 })).json().messages).toHaveLength(
        1,
      );
      await insp.close();
    });

    it('a revoked delegation keeps it disconnected (503); granted again, it reconnects', async () => {
      const { d, s } = await setup('xoauth2', {
        oauth_service_account_key: JSON.stringify({
          client_email: SA,
          private_key: sa.privateKeyPem,
          token_uri: ts.googleTokenUrl,
        }),
      });
      await s.startAndWait();
      ts.setConsent(SA, false);
      await d.stop();
      await d.start();
      await new Promise((r) => setTimeout(r, 1500));
      expect((await post(s, '/internal/fetch', { max_messages: 1 })).statusCode).toBe(503);
      ts.setConsent(SA, true);
      await waitFor(
        async () => (await s.app.inject({ url: '/health' })).statusCode === 200,
        'reconnect',
      );
    });
  },
);
