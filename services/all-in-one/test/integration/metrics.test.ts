import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findRepoRoot, loadConfig } from '@trawl/config';
import { freePort } from '@trawl/platform/testing';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Embedded, startEmbedded } from '../../src/index.ts';

const work = mkdtempSync(join(tmpdir(), 'trawl-embedded-metrics-'));
const PASSWORD = 'Correct-Horse-Battery-9';
let retriever: Server;
let e: Embedded;

const MESSAGE = [
  'From: "PayPal Security" <security@paypa1-verify.example>',
  'To: victim@example.org',
  'Subject: Your account has been locked - verify within 24 hours',
  'Message-ID: <m1@paypa1-verify.example>',
  'Date: Mon, 1 Jan 2026 10:00:00 +0000',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'Dear customer, unauthorized access was detected. Verify your password now at',
  'http://paypa1-verify.example/login or your account will be suspended.',
  '',
].join('\r\n');

beforeAll(async () => {
  // A retriever that has nothing to hand out now but says 7 messages wait at its source.
  retriever = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/internal/fetch') res.end(JSON.stringify({ messages: [], backlog: 7 }));
    else res.end('{}');
  });
  await new Promise<void>((r) => retriever.listen(0, '127.0.0.1', r));
  const addr = retriever.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  const cfg = loadConfig({
    env: {
      APP_ENV: 'dev',
      TRAWL_DATA_DIR: join(work, 'data'),
      TRAWL_ANALYSIS_WORKERS: '0',
      TRAWL_ADMIN_USER: 'admin',
      TRAWL_ADMIN_PASSWORD: PASSWORD,
      INTERNAL_API_KEY: 'k'.repeat(48),
      TRAWL_MAIL_ORCHESTRATOR_PORT: String(await freePort()),
      TRAWL_MAIL_RETRIEVERS: JSON.stringify({ box: { url: `http://127.0.0.1:${port}` } }),
    },
    envFile: false,
    rootDir: findRepoRoot(),
    needs: { postgres: false, rabbitmq: false, redis: false, secretKey: true },
  });
  e = await startEmbedded(cfg, { port: 0, logger: pino({ level: 'silent' }) });
}, 60_000);

afterAll(async () => {
  await e?.close();
  await new Promise<void>((r) => retriever.close(() => r()));
  rmSync(work, { recursive: true, force: true });
});

async function scrape(): Promise<string> {
  const res = await fetch(`${e.url}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

/** The value of one sample, by name and a label subset; undefined when absent. */
function sample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('embedded mode: one /metrics shows what the platform is doing (it had only HTTP counters)', () => {
  it('counts a job by outcome and verdict, times the job and its stages, shows the queue and the retriever backlog', async () => {
    const token = (await (
      await fetch(`${e.url}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ grant_type: 'password', username: 'admin', password: PASSWORD }),
      })
    ).json()) as { access_token: string };
    const sub = (await (
      await fetch(`${e.url}/api/v1/analyze/raw`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token.access_token}`,
          'content-type': 'message/rfc822',
        },
        body: MESSAGE,
      })
    ).json()) as { job_id: string };
    let job: { status: string; result?: { is_phishing: boolean } } = { status: 'queued' };
    for (let i = 0; i < 200 && job.status !== 'completed' && job.status !== 'failed'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      job = (await (
        await fetch(`${e.url}/api/v1/analyze/${sub.job_id}`, {
          headers: { authorization: `Bearer ${token.access_token}` },
        })
      ).json()) as typeof job;
    }
    expect(job.status).toBe('completed');
    const verdict = job.result?.is_phishing ? 'phishing' : 'not_phishing';

    let text = await scrape();
    for (let i = 0; i < 100 && sample(text, 'trawl_mail_retriever_backlog') === undefined; i++) {
      await new Promise((r) => setTimeout(r, 100));
      text = await scrape();
    }
    // the gateway's own series are still there
    expect(sample(text, 'trawl_jobs_submitted_total')).toBe(1);
    expect(sample(text, 'trawl_http_requests_total', { route: '/api/v1/analyze/raw' })).toBe(1);
    // jobs by outcome and by verdict
    expect(sample(text, 'trawl_jobs_total', { status: 'completed' })).toBe(1);
    expect(sample(text, 'trawl_job_verdicts_total', { verdict, workflow: 'default' })).toBe(1);
    // job and stage durations
    expect(sample(text, 'trawl_job_duration_seconds_count', { status: 'completed' })).toBe(1);
    expect(
      sample(text, 'trawl_stage_duration_seconds_count', {
        workflow: 'default',
        stage: 'offline',
        status: 'completed',
      }),
    ).toBe(1);
    expect(
      sample(text, 'trawl_analyzer_call_duration_seconds_count', { analyzer: 'headers' }),
    ).toBe(1);
    expect(text).toContain('# TYPE trawl_analyzer_errors_total counter');
    // queue depth, read at scrape time: the request was consumed
    expect(sample(text, 'trawl_queue_depth', { queue: 'trawl.analysis.requests' })).toBe(0);
    // retriever backlog, as the retriever reported it
    expect(sample(text, 'trawl_mail_retriever_backlog', { retriever: 'box' })).toBe(7);
  }, 60_000);
});
