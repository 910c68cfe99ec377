/**
 * The web console in a real browser (Debian's chromium driven by playwright-core) against an
 * embedded Trawl started here on 127.0.0.1 (PGlite, in-process broker and cache): sign in, submit
 * a phishing message and watch its verdict arrive live, its evidence and its message (a remote
 * image in it is never fetched), feedback, users and the audit log, roles, and axe-core on every
 * page. Screenshots of each page go to docs/console/.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findRepoRoot, loadConfig } from '@trawl/config';
import { pino } from 'pino';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Embedded, startEmbedded } from '../../src/index.ts';

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CI === 'true') {
  throw new Error(`chromium not found at ${CHROMIUM}: CI must install Debian's chromium package`);
}

const ROOT = findRepoRoot();
const SHOTS = join(ROOT, 'docs', 'console');
const ADMIN = { user: 'admin', password: 'console test passphrase 42' };
const AXE = readFileSync(
  join(ROOT, 'services', 'all-in-one', 'node_modules', 'axe-core', 'axe.min.js'),
  'utf8',
);

/** A local server counting every request: the "remote" image of the message points at it. */
let pixelHits = 0;
let pixel: Server;
let pixelUrl = '';

function phishingEml(imageUrl: string, to = 'alice@example.org', n = 1): string {
  return [
    'Received: from mail.paypa1-secure.example (mail.paypa1-secure.example [203.0.113.7])',
    '\tby mx.example.org with ESMTP id 1A2B3C; Fri, 27 Nov 2026 08:59:58 +0000',
    'From: "PayPal Security" <security@paypa1-secure.example>',
    'Reply-To: billing-desk@freemail-reply.example',
    `To: ${to}`,
    'Subject: Urgent: your account has been suspended',
    'Date: Fri, 27 Nov 2026 09:00:00 +0000',
    `Message-ID: <console-test-${n}@paypa1-secure.example>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/alternative; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Dear customer, your account has been suspended. Verify your password within 24 hours',
    'or your account will be closed: http://paypa1-secure.example/login/verify',
    '',
    '--b1',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<html><body><p>Dear customer,</p>',
    '<p>Your account has been <b>suspended</b>. Verify your password within 24 hours or it will be closed.</p>',
    '<p><a href="http://paypa1-secure.example/login/verify">https://www.paypal.com/signin</a></p>',
    `<img src="${imageUrl}" alt="logo" width="1" height="1">`,
    '</body></html>',
    '',
    '--b1--',
    '',
  ].join('\r\n');
}

let work: string;
let trawl: Embedded;
let browser: Browser;
let base: string;

async function axeCheck(page: Page, name: string): Promise<void> {
  await page.evaluate(AXE);
  const violations = (await page.evaluate(`
    axe.run(document, { resultTypes: ['violations'] }).then((r) =>
      r.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => v.id + ': ' + v.help + ' (' + v.nodes.map((n) => n.target.join(' ')).join(', ') + ')'))
  `)) as string[];
  expect(violations, `axe on ${name}`).toEqual([]);
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

async function signIn(ctx: BrowserContext, user: string, password: string): Promise<Page> {
  const page = await ctx.newPage();
  await page.goto(`${base}/`);
  await page.waitForURL(/\/signin/);
  await page.getByLabel('Username').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  return page;
}

/** Whether an endpoint other work adds is there yet (404 unauthenticated: not registered). */
async function endpointExists(method: string, path: string): Promise<boolean> {
  const res = await fetch(`${base}${path}`, { method });
  return res.status !== 404;
}

describe.skipIf(!haveChromium)('the web console in a real browser', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    pixel = createServer((_req, res) => {
      pixelHits++;
      res.writeHead(200, { 'content-type': 'image/gif' }).end();
    });
    await new Promise<void>((r) => pixel.listen(0, '127.0.0.1', r));
    pixelUrl = `http://127.0.0.1:${(pixel.address() as AddressInfo).port}/logo.gif`;
    work = mkdtempSync(join(tmpdir(), 'trawl-console-'));
    const cfg = loadConfig({
      env: {
        APP_ENV: 'dev',
        TRAWL_DATA_DIR: work,
        TRAWL_ADMIN_USER: ADMIN.user,
        TRAWL_ADMIN_PASSWORD: ADMIN.password,
        TRAWL_ANALYSIS_WORKERS: '0',
      },
      envFile: false,
      rootDir: ROOT,
      needs: { postgres: false, rabbitmq: false, redis: false, secretKey: true },
    });
    trawl = await startEmbedded(cfg, { port: 0, logger: pino({ level: 'silent' }) });
    base = trawl.url;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await trawl?.close();
    await new Promise<void>((r) => (pixel ? pixel.close(() => r()) : r()));
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('serves the console at / and its client routes with a strict CSP; the API keeps its 404s', async () => {
    for (const path of ['/', '/jobs/123', '/users']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
    }
    const api404 = await fetch(`${base}/api/v1/no-such-thing`);
    expect(api404.status).toBe(404);
    expect(api404.headers.get('content-type')).toContain('application/problem+json');
    // the event stream is authenticated like every API route
    expect((await fetch(`${base}/api/v1/events`)).status).toBe(401);
  });

  it('keeps the refresh token in an HttpOnly cookie for the console, in the JSON for the CLI', async () => {
    const form = new URLSearchParams({
      grant_type: 'password',
      username: ADMIN.user,
      password: ADMIN.password,
    });
    const cli = await fetch(`${base}/auth/token`, { method: 'POST', body: form });
    expect(((await cli.json()) as { refresh_token?: string }).refresh_token).toBeTruthy();
    const web = await fetch(`${base}/auth/token`, {
      method: 'POST',
      body: form,
      headers: { 'x-trawl-refresh': 'cookie' },
    });
    const body = (await web.json()) as { access_token?: string; refresh_token?: string };
    expect(body.access_token).toBeTruthy();
    expect(body.refresh_token).toBeUndefined();
    const cookie = web.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^trawl_refresh=[A-Za-z0-9_-]+;/);
    for (const attr of ['HttpOnly', 'Secure', 'SameSite=Strict', 'Path=/auth'])
      expect(cookie).toContain(attr);
    const pair = cookie.split(';')[0]!;
    // the cookie refreshes only with the header a cross-site form cannot send
    const without = await fetch(`${base}/auth/refresh`, {
      method: 'POST',
      headers: { cookie: pair, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(without.status).not.toBe(200);
    const refreshed = await fetch(`${base}/auth/refresh`, {
      method: 'POST',
      headers: { cookie: pair, 'x-trawl-refresh': 'cookie', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(refreshed.status).toBe(200);
  });

  it('an analyst day: sign in, submit, watch the verdict arrive, evidence, message, feedback', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    try {
      const signin = await ctx.newPage();
      await signin.goto(`${base}/jobs`);
      await signin.waitForURL(/\/signin\?next=%2Fjobs/);
      await axeCheck(signin, 'sign in');
      await shot(signin, 'sign-in');
      await signin.close();

      const page = await signIn(ctx, ADMIN.user, ADMIN.password);
      page.on('pageerror', (e) => errors.push(String(e)));
      // the session survives a reload: the access token is in memory, the refresh in the cookie
      await page.reload();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();

      // Jobs, open before the submission: the new job must appear and finish there by itself.
      await page.getByRole('link', { name: 'Jobs', exact: true }).click();
      await page.getByRole('heading', { name: 'Jobs' }).waitFor();
      await expect.poll(() => page.getByText('No job matches.').count()).toBe(1);

      const submit = await ctx.newPage();
      submit.on('pageerror', (e) => errors.push(String(e)));
      await submit.goto(`${base}/submit`);
      await submit.getByRole('heading', { name: 'Submit messages' }).waitFor();
      // the same lure to two recipients: one campaign
      await submit.locator('#files').setInputFiles([
        {
          name: 'suspended.eml',
          mimeType: 'message/rfc822',
          buffer: Buffer.from(phishingEml(pixelUrl)),
        },
        {
          name: 'suspended-bob.eml',
          mimeType: 'message/rfc822',
          buffer: Buffer.from(phishingEml(pixelUrl, 'bob@example.org', 2)),
        },
      ]);
      for (const item of [
        submit.locator('.submissions li').first(),
        submit.locator('.submissions li').nth(1),
      ])
        await item.getByText('phishing', { exact: true }).waitFor({ timeout: 60_000 });
      await axeCheck(submit, 'submit');
      await shot(submit, 'submit');

      // The jobs page, never reloaded by hand, shows the finished job.
      const row = page.locator('table.jobs tbody tr').first();
      await row.getByText('phishing', { exact: true }).waitFor({ timeout: 30_000 });
      await expect.poll(() => page.locator('table.jobs tbody tr').count()).toBe(2);
      // filters live in the URL
      await page.getByLabel('Verdict').selectOption('false');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForURL(/is_phishing=false/);
      await page.getByText('No job matches.').waitFor();
      await page.goBack();
      await row.getByText('phishing', { exact: true }).waitFor();
      await axeCheck(page, 'jobs');
      await shot(page, 'jobs');

      // The job and its evidence.
      await row.getByRole('link').first().click();
      await page
        .getByRole('heading', { name: /Urgent: your account has been suspended/ })
        .waitFor();
      await page.getByRole('heading', { name: 'Stages' }).waitFor();
      await page.getByRole('heading', { name: /URLs \(\d+\)/ }).waitFor();
      // the score by group and symbol, from the scorer, with the symbols the lure raised
      const score = page.getByRole('table', { name: /Score by group and symbol/ });
      await score.waitFor();
      expect(await score.getByRole('cell', { name: /^content\./ }).count()).toBeGreaterThan(0);
      // its campaign (grouped in the background once both jobs are settled), and the other
      // recipient of the same lure
      const campaign = /Campaign [0-9a-f-]+: 2 messages to 2 recipients/;
      await expect
        .poll(
          async () => {
            if ((await page.getByText(campaign).count()) === 0) await page.reload();
            return page.getByText(campaign).count();
          },
          { timeout: 30_000, interval: 1000 },
        )
        .toBe(1);
      expect(
        await page.getByRole('link', { name: /^(alice|bob)@example\.org$/ }).count(),
      ).toBeGreaterThan(0);
      expect(await page.getByText('paypa1-secure.example/login/verify').count()).toBeGreaterThan(0);
      expect(await page.getByText('security@paypa1-secure.example').count()).toBeGreaterThan(0);
      const jobUrl = page.url();

      // Feedback (when this server has it).
      if (
        await endpointExists(
          'POST',
          `${new URL(jobUrl).pathname.replace('/jobs/', '/api/v1/analyze/')}/feedback`,
        )
      ) {
        await page.getByLabel('Note (optional)').fill('reported by alice too');
        await page.getByRole('button', { name: 'It is phishing' }).click();
        await page.getByText(/Marked phishing by admin/).waitFor();
      } else {
        await page.getByRole('button', { name: 'It is phishing' }).click();
        await page.getByText('Feedback is not available on this server.').waitFor();
      }
      await axeCheck(page, 'job');
      await shot(page, 'job');

      // The message: the HTML in a frame with no privilege; the remote image is never fetched.
      const pixelWorks = await fetch(pixelUrl);
      expect(pixelWorks.status).toBe(200);
      pixelHits = 0;
      await page.getByRole('link', { name: 'View the message' }).click();
      await page.getByRole('heading', { name: 'Message' }).waitFor();
      const jobPath = new URL(jobUrl).pathname.replace('/jobs/', '/api/v1/analyze/');
      if (await endpointExists('GET', `${jobPath}/message`)) {
        const frame = page.locator('iframe.mail-frame');
        await frame.waitFor();
        expect(await frame.getAttribute('sandbox')).toBe('');
        await expect
          .poll(() => page.frameLocator('iframe.mail-frame').getByText('Dear customer').count())
          .toBeGreaterThan(0);
      } else {
        await page.getByText('The message view is not available on this server.').waitFor();
      }
      await page.waitForTimeout(500);
      expect(pixelHits).toBe(0);
      await axeCheck(page, 'message');
      await shot(page, 'message');

      // Overview, workflows, a workflow, configuration.
      await page.getByRole('link', { name: 'Overview' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.getByText(/phishing: 2/).waitFor();
      await axeCheck(page, 'overview');
      await shot(page, 'overview');
      await page.getByRole('link', { name: 'Workflows' }).click();
      await page.getByRole('link', { name: 'Default' }).click();
      await page.getByRole('heading', { name: 'Workflow: Default' }).waitFor();
      await page.getByRole('button', { name: 'Validate' }).click();
      await page.getByText('The workflow is valid.').waitFor();
      await axeCheck(page, 'workflow');
      await shot(page, 'workflow');
      await page.getByRole('link', { name: 'Configuration' }).click();
      await page.getByRole('button', { name: 'Reload the configuration' }).click();
      await page.getByText('nothing (same content)').waitFor();
      await page
        .getByRole('table', { name: 'Versions run, newest first' })
        .getByText('running')
        .waitFor();
      await axeCheck(page, 'config');
      await shot(page, 'config');
      expect(errors).toEqual([]);
    } finally {
      await ctx.close();
    }
  });

  it('an admin creates a user and sees it in the audit log; a viewer cannot see admin pages', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await signIn(ctx, ADMIN.user, ADMIN.password);
      await page.getByRole('link', { name: 'Users' }).click();
      await page.getByLabel('Username').fill('vera');
      await page.getByLabel('Password').fill('reads every verdict daily');
      await page.getByLabel('Role').selectOption('viewer');
      await page.getByRole('button', { name: 'Create' }).click();
      await page.getByText('User vera created.').waitFor();
      await page.getByRole('cell', { name: 'vera', exact: true }).waitFor();
      await axeCheck(page, 'users');
      await shot(page, 'users');

      await page.getByRole('link', { name: 'Audit log' }).click();
      const created = page.locator('table.audit tbody tr', { hasText: 'vera' }).first();
      await created.waitFor();
      expect(await created.textContent()).toContain('admin');
      await axeCheck(page, 'audit');
      await shot(page, 'audit');

      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
      await axeCheck(page, 'webhooks');
      await shot(page, 'webhooks');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/signin/);
      // signed out for good: the cookie's refresh token was used up
      await page.goto(`${base}/jobs`);
      await page.waitForURL(/\/signin/);
    } finally {
      await ctx.close();
    }

    const viewerCtx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await signIn(viewerCtx, 'vera', 'reads every verdict daily');
      const nav = page.getByRole('navigation', { name: 'Main' });
      await nav.getByRole('link', { name: 'Jobs' }).waitFor();
      for (const name of ['Users', 'Audit log', 'Webhooks', 'Submit'])
        expect(await nav.getByRole('link', { name }).count(), name).toBe(0);
      for (const path of ['/users', '/audit', '/webhooks']) {
        await page.goto(`${base}${path}`);
        await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
      }
      await axeCheck(page, 'not allowed');
    } finally {
      await viewerCtx.close();
    }
  });

  it('issue 32: a list an analyst reads, reports, lists, your password, no refresh at a signed-out load', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const errors: string[] = [];
    try {
      // a signed-out load asks nothing of /auth/refresh (no 422, no 401 in the browser's log)
      const first = await ctx.newPage();
      const refreshes: number[] = [];
      first.on('response', (r) => {
        if (r.url().endsWith('/auth/refresh')) refreshes.push(r.status());
      });
      await first.goto(`${base}/jobs`);
      await first.waitForURL(/\/signin/);
      expect(refreshes).toEqual([]);
      await first.close();

      const page = await signIn(ctx, ADMIN.user, ADMIN.password);
      page.on('pageerror', (e) => errors.push(String(e)));
      // signed in, a reload restores the session through the cookie
      await page.reload();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();

      // Submit: synthetic messages, one of them a user's report
      const submit = await ctx.newPage();
      await submit.goto(`${base}/submit`);
      await submit.getByRole('heading', { name: 'Submit messages' }).waitFor();
      await submit.locator('#files').setInputFiles(
        LIST_MESSAGES.map((m, i) => ({
          name: `m${i}.eml`,
          mimeType: 'message/rfc822',
          buffer: Buffer.from(listMessage(m, i)),
        })),
      );
      for (let i = 0; i < LIST_MESSAGES.length; i++)
        await submit
          .locator('.submissions li')
          .nth(i)
          .locator('.badge, .verdict')
          .first()
          .waitFor({ timeout: 60_000 });
      await submit.getByLabel("This is a user's report").check();
      await submit.locator('#files').setInputFiles({
        name: 'report.eml',
        mimeType: 'message/rfc822',
        buffer: Buffer.from(reportOf(listMessage(REPORTED, 9))),
      });
      await submit
        .locator('.submissions li', { hasText: 'report.eml' })
        .getByText('open the job')
        .waitFor({ timeout: 60_000 });
      await submit.close();

      // the jobs list: subjects, senders, recipients, the reporter, the top indicator
      await page.goto(`${base}/jobs`);
      const table = page.locator('table.jobs');
      await table.getByText('Quarterly payroll adjustment').waitFor({ timeout: 30_000 });
      await table.getByText(REPORTED.subject).waitFor({ timeout: 30_000 });
      const payroll = page.locator('table.jobs tbody tr', {
        hasText: 'Quarterly payroll adjustment',
      });
      expect(await payroll.textContent()).toContain('payroll@hr-portal.example');
      expect(await payroll.textContent()).toContain('+2');
      const reported = page.locator('table.jobs tbody tr', { hasText: REPORTED.subject });
      // its reporter (the fifth column; the report was also addressed to the reporter)
      await expect
        .poll(() => reported.locator('td').nth(4).textContent(), { timeout: 30_000 })
        .toBe('ann.reporter@example.org');
      await axeCheck(page, 'jobs (issue 32)');
      await shot(page, 'jobs');
      // /jobs?reporter=… is honoured, and the filter is on the page
      await page.goto(`${base}/jobs?reporter=ann.reporter%40example.org`);
      await page.getByLabel('Reported by').waitFor();
      expect(await page.getByLabel('Reported by').inputValue()).toBe('ann.reporter@example.org');
      await expect
        .poll(() => page.locator('table.jobs tbody tr').count(), { timeout: 30_000 })
        .toBe(1);
      await page.locator('table.jobs').getByText(REPORTED.subject).waitFor();

      // the overview lists no failing analyzer: the llm that is off is skipped, not failed
      await page.goto(`${base}/`);
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.getByText('No analyzer failed or timed out in the last 24 hours.').waitFor();

      // Lists: block a sender domain; the next message from it is blocked, the job says why
      await page.getByRole('link', { name: 'Lists' }).click();
      await page.getByRole('heading', { name: 'Allow and block lists' }).waitFor();
      await page.getByLabel('List', { exact: true }).selectOption('block');
      await page.getByLabel('Kind').selectOption('sender_domain');
      await page.getByLabel('Value').fill('newsletter-deals.example');
      await page.getByLabel('Note').fill('bulk sender the users keep reporting');
      await page.getByRole('button', { name: 'Add' }).click();
      await page.getByText('newsletter-deals.example added to the block list.').waitFor();
      await page
        .locator('table.lists')
        .getByText('newsletter-deals.example', { exact: true })
        .waitFor();
      await axeCheck(page, 'lists');
      await shot(page, 'lists');
      const submitAgain = await ctx.newPage();
      await submitAgain.goto(`${base}/submit`);
      await submitAgain.locator('#files').setInputFiles({
        name: 'deals.eml',
        mimeType: 'message/rfc822',
        buffer: Buffer.from(listMessage({ ...LIST_MESSAGES[2]!, subject: 'More weekly deals' }, 7)),
      });
      await submitAgain
        .locator('.submissions li')
        .first()
        .getByText('phishing', { exact: true })
        .waitFor({ timeout: 60_000 });
      await submitAgain.locator('.submissions li').first().getByText('open the job').click();
      await submitAgain.getByRole('heading', { name: 'Allow and block lists' }).waitFor();
      await submitAgain.getByText('bulk sender the users keep reporting').first().waitFor();
      await submitAgain.close();

      // Your account: change your own password; the console signs in again with it
      await page.getByRole('link', { name: /Your account/ }).click();
      await page.getByRole('heading', { name: 'Your account' }).waitFor();
      await page.getByLabel('Current password').fill(ADMIN.password);
      await page.getByLabel('New password', { exact: true }).fill(NEW_ADMIN_PASSWORD);
      await page.getByLabel('New password again').fill(NEW_ADMIN_PASSWORD);
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByText('Password changed.').waitFor();
      await axeCheck(page, 'account');
      await shot(page, 'account');
      await page.getByRole('link', { name: 'Jobs', exact: true }).click();
      await page.getByRole('heading', { name: 'Jobs' }).waitFor();
      expect(errors).toEqual([]);
    } finally {
      await ctx.close();
    }
  });
});

const NEW_ADMIN_PASSWORD = 'seven blue herons at dawn';

interface ListMessage {
  from: string;
  name: string;
  to: string[];
  subject: string;
  body: string;
}

/** Synthetic messages (written for this test, not corpus mail) for the jobs list screenshot. */
const LIST_MESSAGES: ListMessage[] = [
  {
    from: 'payroll@hr-portal.example',
    name: 'HR Portal',
    to: [
      'alice@example.org',
      'bob@example.org',
      'carol@example.org',
      'dave@example.org',
      'erin@example.org',
    ],
    subject: 'Quarterly payroll adjustment',
    body: 'Your salary adjustment is waiting. Sign in within 24 hours to confirm your bank details: http://hr-portal.example/confirm',
  },
  {
    from: 'it-helpdesk@mailbox-quota.example',
    name: 'IT Helpdesk',
    to: ['alice@example.org'],
    subject: 'Your mailbox is almost full',
    body: 'Your mailbox has reached its quota. Verify your password now or lose your mail: http://mailbox-quota.example/verify',
  },
  {
    from: 'offers@newsletter-deals.example',
    name: 'Weekly Deals',
    to: ['bob@example.org'],
    subject: 'This week: garden furniture',
    body: 'Our garden range is back. See the catalogue on our site. Unsubscribe at any time.',
  },
  {
    from: 'minutes@team-notes.example',
    name: 'Team Notes',
    to: ['carol@example.org', 'dave@example.org'],
    subject: 'Minutes of the Tuesday planning meeting',
    body: 'Attached are the notes of Tuesday. Next meeting on Thursday at ten.',
  },
];
const REPORTED: ListMessage = {
  from: 'prize-desk@lucky-winner.example',
  name: 'Prize Desk',
  to: ['ann.reporter@example.org'],
  subject: 'You have won a 500 EUR gift card',
  body: 'Congratulations! Claim your gift card today by entering your card number: http://lucky-winner.example/claim',
};

function listMessage(m: ListMessage, n: number): string {
  const domain = m.from.split('@')[1];
  return [
    `Received: from mail.${domain} (mail.${domain} [203.0.113.${20 + n}])`,
    `\tby mx.example.org with ESMTP id L${n}; Fri, 27 Nov 2026 10:0${n % 10}:00 +0000`,
    `From: "${m.name}" <${m.from}>`,
    `To: ${m.to.join(', ')}`,
    `Subject: ${m.subject}`,
    `Date: Fri, 27 Nov 2026 10:0${n % 10}:00 +0000`,
    `Message-ID: <list-${n}@${domain}>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    m.body,
    '',
  ].join('\r\n');
}

/** A user's report: the original attached as message/rfc822 to a forward. */
function reportOf(original: string): string {
  return [
    'From: "Ann Reporter" <ann.reporter@example.org>',
    'To: phishing-reports@example.org',
    'Subject: FW: is this real?',
    'Date: Fri, 27 Nov 2026 11:00:00 +0000',
    'Message-ID: <report-9@example.org>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="rep"',
    '',
    '--rep',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'I got this, is it real?',
    '--rep',
    'Content-Type: message/rfc822',
    '',
    original,
    '--rep--',
    '',
  ].join('\r\n');
}
