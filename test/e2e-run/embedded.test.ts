import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cloneAndInstall,
  corpusPhishing,
  freePort,
  type Proc,
  runCmd,
  SYNTHETIC_EML,
  startProc,
} from './helpers.ts';

/**
 * A newcomer's path: clone, install, the README's run command (`pnpm start`) with a fresh
 * environment, log in with the printed credentials, analyze a phishing message with the CLI, stop,
 * start again and find the job still there; jobs queued when it stopped are not lost.
 */

const work = mkdtempSync(join(tmpdir(), 'trawl-e2e-embedded-'));
const repo = join(work, 'trawl');
let port = 0;
let env: Record<string, string | undefined> = {};
const procs: Proc[] = [];

/** A fresh environment: nothing of this process's TRAWL_*, DATABASE_URL, … leaks in. */
function freshEnv(extra: Record<string, string> = {}): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    HOME: join(work, 'home'),
    XDG_CONFIG_HOME: join(work, 'xdg'),
    LANG: 'C.UTF-8',
    TRAWL_E2E_WORKTREE: process.env.TRAWL_E2E_WORKTREE,
    ...extra,
  };
}

/** `pnpm start` in its own process group (so the whole tree gets the signal). */
function start(): Proc {
  const p = startProc('pnpm', ['start'], { cwd: repo, env, detached: true });
  procs.push(p);
  return p;
}

const trawl = (args: string[], input?: string) =>
  runCmd('pnpm', ['--silent', 'trawl', ...args], {
    cwd: repo,
    env,
    ...(input === undefined ? {} : { input }),
    timeoutMs: 120_000,
  });

beforeAll(async () => {
  port = await freePort();
  env = freshEnv({
    API_GATEWAY_PORT: String(port),
    TRAWL_HOST: '127.0.0.1',
    TRAWL_DATA_DIR: join(work, 'data'),
    // Slow the single worker down so jobs are still queued when it stops.
    TRAWL_ORCHESTRATOR_PREFETCH: '1',
  });
  await cloneAndInstall(repo, env);
}, 300_000);

afterAll(async () => {
  for (const p of procs) await p.stop('SIGKILL', 5_000);
  rmSync(work, { recursive: true, force: true });
});

describe('embedded mode from a fresh clone', () => {
  let jobId = '';
  let password = '';
  let eml = '';

  it('starts, prints the admin credentials once, and analyzes a phishing message', async () => {
    eml = corpusPhishing() ?? join(work, 'synthetic.eml');
    if (eml.endsWith('synthetic.eml')) writeFileSync(eml, SYNTHETIC_EML);

    const app = start();
    const up = await app.waitFor(/Trawl is running at \S+\s+\(started in ([\d.]+) s\)/, 180_000);
    process.stdout.write(`[e2e embedded] first start (fresh data folder): ${up[1]} s\n`);
    const m = await app.waitFor(/TRAWL_ADMIN_PASSWORD=(\S+)/, 5_000);
    password = m[1] as string;
    expect(app.out()).toMatch(/TRAWL_ADMIN_USER=admin/);

    const login = await trawl(
      ['login', '--url', `http://127.0.0.1:${port}`, '--user', 'admin', '--password-stdin'],
      `${password}\n`,
    );
    expect(login.code, login.stderr).toBe(0);

    const res = await trawl(['analyze', eml, '--wait', '--json']);
    // 10: the verdict is phishing; 0: not phishing. Either way the job completed.
    expect([0, 10], res.stderr).toContain(res.code);
    const job = JSON.parse(res.stdout);
    expect(job.status).toBe('completed');
    expect(typeof job.result.is_phishing).toBe('boolean');
    expect(job.result.confidence).toBeGreaterThanOrEqual(0);
    expect(res.code).toBe(job.result.is_phishing ? 10 : 0);
    jobId = job.job_id;

    // Human output reads as a verdict.
    const human = await trawl(['job', jobId]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/verdict\s+(PHISHING|not phishing)/);
    expect(human.stdout).toMatch(/action\s+(allow|flag|review|quarantine)/);

    await app.stop('SIGTERM', 60_000);
    expect(app.out(), app.out().slice(-4000)).toContain('Trawl stopped.');
  }, 300_000);

  it('keeps the job across a restart and does not print the credentials again', async () => {
    const app = start();
    const up = await app.waitFor(/\(started in ([\d.]+) s\)/, 120_000);
    process.stdout.write(`[e2e embedded] restart: ${up[1]} s\n`);
    expect(app.out()).not.toContain(password);
    const res = await trawl(['job', jobId, '--json']);
    expect(res.code, res.stderr).toBe(0);
    const job = JSON.parse(res.stdout);
    expect(job.status).toBe('completed');
    expect(job.job_id).toBe(jobId);
  }, 180_000);

  it('loses no job queued when it stopped: they run after the next start', async () => {
    const base = `http://127.0.0.1:${port}`;
    const tok = await fetch(`${base}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', username: 'admin', password }),
    });
    const { access_token } = (await tok.json()) as { access_token: string };
    const auth = { authorization: `Bearer ${access_token}` };
    const ids: string[] = [];
    const submit = async (i: number) => {
      const r = await fetch(`${base}/api/v1/analyze/raw`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'message/rfc822' },
        body: SYNTHETIC_EML.replace('synthetic-1@', `synthetic-${i}@`),
      });
      expect(r.status).toBe(200);
      ids.push(((await r.json()) as { job_id: string }).job_id);
    };
    // Submissions 20 at a time until the single worker (prefetch 1) has fallen behind: at least
    // 10 jobs still queued (a fixed count left none queued once the embedded store got faster).
    const queued = async () => {
      const r = await fetch(`${base}/api/v1/analyze?status=queued&limit=100`, { headers: auth });
      return ((await r.json()) as { items: unknown[] }).items.length;
    };
    for (let b = 0; b < 15; b++) {
      await Promise.all(Array.from({ length: 20 }, (_, i) => submit(b * 20 + i)));
      if (b >= 2 && (await queued()) >= 10) break;
    }
    // Stop at once: whatever the single worker has not started stays queued in the store.
    const running = procs.at(-1) as Proc;
    await running.stop('SIGTERM', 60_000);
    expect(running.out(), running.out().slice(-4000)).toContain('Trawl stopped.');
    // Nothing completes between here and the next start: a job completed later was re-queued.
    const stoppedAt = Date.now();

    const app = start();
    const banner = await app.waitFor(/Trawl is running at/, 120_000);
    expect(banner).toBeTruthy();
    const requeued = Number(app.out().match(/(\d+) unfinished job\(s\)/)?.[1] ?? '0');
    process.stdout.write(`[e2e embedded] re-queued after restart: ${requeued} of ${ids.length}\n`);
    // The test is about them: some jobs must have been left queued by the stop.
    expect(requeued).toBeGreaterThan(0);

    const login = await fetch(`${base}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', username: 'admin', password }),
    });
    const fresh = {
      authorization: `Bearer ${((await login.json()) as { access_token: string }).access_token}`,
    };
    const deadline = Date.now() + 120_000;
    const pending = new Set(ids);
    let completedAfterRestart = 0;
    while (pending.size > 0 && Date.now() < deadline) {
      for (const id of [...pending]) {
        const r = await fetch(`${base}/api/v1/analyze/${id}`, { headers: fresh });
        const j = (await r.json()) as { status: string; completed_at?: string | null };
        if (j.status === 'completed' || j.status === 'failed') {
          expect(j.status).toBe('completed');
          if (j.completed_at && Date.parse(j.completed_at) > stoppedAt) completedAfterRestart++;
          pending.delete(id);
        }
      }
      if (pending.size > 0) await new Promise((r) => setTimeout(r, 250));
    }
    expect([...pending]).toEqual([]);
    // Every re-queued job ran to completion in the new process, and only those did.
    expect(completedAfterRestart).toBe(requeued);
    await app.stop('SIGTERM', 60_000);
    expect(app.out(), app.out().slice(-4000)).toContain('Trawl stopped.');
  }, 300_000);
});
