/**
 * Issue 32, release from quarantine in the web console, in a real browser (Debian's chromium driven
 * by playwright-core): an embedded Trawl with the SMTP filter registered as its retriever, a
 * quarantined message recorded by the filter's credential, an admin releases it from the job page,
 * the filter delivers the original to its recipients (an SMTP sink here) once, and the page says
 * who released it.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findRepoRoot, loadConfig } from '@trawl/config';
import { deriveCredential } from '@trawl/contracts';
import { createSmtpFilter, type SmtpFilterService, SmtpSettings } from '@trawl/retriever-smtp';
import {
  freePort,
  type SmtpSink,
  silentLogger,
  startSmtpSink,
} from '@trawl/retriever-smtp/testing';
import { pino } from 'pino';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Embedded, startEmbedded } from '../../src/index.ts';

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CI === 'true') {
  throw new Error(`chromium not found at ${CHROMIUM}: CI must install Debian's chromium package`);
}

const ADMIN = { user: 'admin', password: 'console quarantine passphrase 42' };
const KEY = 'console-quarantine-platform-key-0123456789abcdef';
const RAW = [
  'From: "PayPal Security" <security@paypa1-secure.example>',
  'To: alice@example.org',
  'Subject: Urgent: your account has been suspended',
  'Date: Fri, 27 Nov 2026 09:00:00 +0000',
  'Message-ID: <quarantined-1@paypa1-secure.example>',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'Verify your password within 24 hours: http://paypa1-secure.example/login',
  '',
].join('\r\n');

describe.skipIf(!haveChromium)(
  'release from quarantine in the console',
  { timeout: 300_000 },
  () => {
    let work = '';
    let trawl: Embedded;
    let filter: SmtpFilterService;
    let sink: SmtpSink;
    let browser: Browser;
    let jobId = '';
    let recordId = '';

    beforeAll(async () => {
      sink = await startSmtpSink();
      const filterHttp = await freePort();
      const credential = deriveCredential(KEY, { kind: 'retriever', id: 'smtp' });
      filter = createSmtpFilter(
        SmtpSettings.parse({
          mail_orchestrator_url: 'http://127.0.0.1:9',
          return_port: sink.port,
          verify_auth: false,
          tag_only: true,
        }),
        { logger: silentLogger, credential, smtpPort: 0 },
      );
      await filter.app.listen({ host: '127.0.0.1', port: filterHttp });
      work = mkdtempSync(join(tmpdir(), 'trawl-console-q-'));
      const cfg = loadConfig({
        env: {
          APP_ENV: 'dev',
          TRAWL_DATA_DIR: work,
          TRAWL_ADMIN_USER: ADMIN.user,
          TRAWL_ADMIN_PASSWORD: ADMIN.password,
          TRAWL_ANALYSIS_WORKERS: '0',
          INTERNAL_API_KEY: KEY,
          TRAWL_MAIL_RETRIEVERS: JSON.stringify({
            smtp: { url: `http://127.0.0.1:${filterHttp}` },
          }),
        },
        envFile: false,
        rootDir: findRepoRoot(),
        needs: { postgres: false, rabbitmq: false, redis: false, secretKey: true },
      });
      trawl = await startEmbedded(cfg, { port: 0, logger: pino({ level: 'silent' }) });
      const token = (
        (await (
          await fetch(`${trawl.url}/auth/token`, {
            method: 'POST',
            body: new URLSearchParams({
              grant_type: 'password',
              username: ADMIN.user,
              password: ADMIN.password,
            }),
          })
        ).json()) as { access_token: string }
      ).access_token;
      const sub = await fetch(`${trawl.url}/api/v1/analyze/raw`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'message/rfc822' },
        body: RAW,
      });
      jobId = ((await sub.json()) as { job_id: string }).job_id;
      // what the filter records when it quarantines a message (its own credential)
      const rec = await fetch(`${trawl.url}/api/v1/quarantine`, {
        method: 'POST',
        headers: { 'x-internal-api-key': credential, 'content-type': 'application/json' },
        body: JSON.stringify({
          message_ref: 'a'.repeat(64),
          job_id: jobId,
          envelope_from: 'security@paypa1-secure.example',
          recipients: ['alice@example.org'],
          subject: 'Urgent: your account has been suspended',
          raw: Buffer.from(RAW).toString('base64'),
        }),
      });
      expect(rec.status).toBe(201);
      recordId = ((await rec.json()) as { id: string }).id;
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
      });
    }, 300_000);

    afterAll(async () => {
      await browser?.close();
      await trawl?.close();
      await filter?.stop();
      await sink?.close();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    it('an admin releases the message from its job page; it is delivered once, the page says by whom', async () => {
      const ctx = await browser.newContext();
      const page = await ctx.newPage();
      await page.goto(`${trawl.url}/`);
      await page.waitForURL(/\/signin/);
      await page.getByLabel('Username').fill(ADMIN.user);
      await page.getByLabel('Password').fill(ADMIN.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.goto(`${trawl.url}/jobs/${jobId}`);
      const card = page.locator('.quarantine');
      await card.getByText('Held since').waitFor();
      await card.getByRole('button', { name: 'Release to its recipients' }).click();
      await card.getByText(`Released by ${ADMIN.user}`).waitFor();
      await expect.poll(() => sink.messages.length, { timeout: 30_000 }).toBe(1);
      const m = sink.messages[0];
      expect(m?.to).toEqual(['alice@example.org']);
      expect(m?.header('x-trawl-released-by')).toBe(ADMIN.user);
      // no second release from the page: the button is gone, and the API refuses it
      expect(await card.getByRole('button', { name: 'Release to its recipients' }).count()).toBe(0);
      await page.reload();
      await card.getByText(`Released by ${ADMIN.user}`).waitFor();
      expect(sink.messages).toHaveLength(1);
      expect(recordId).toMatch(/^[0-9a-f-]{36}$/);
      await ctx.close();
    });
  },
);
