import { forgetTeacher, learnFeedback } from '@trawl/investigation';
import { newJob, sampleResult, sampleTrace } from '@trawl/platform/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bearer,
  type Gateway,
  login,
  PASSWORD,
  type RealPlatform,
  seedUsers,
  startGateway,
} from '../helpers/harness.ts';
import { realPlatform } from '../helpers/real-platform.ts';

/**
 * Bounded feedback (issue 28, item 7) on PostgreSQL and Redis: a per-user rate limit shared by the
 * replicas, a cap on one user's share of the classifier's training, conflicting labels between
 * analysts not all learnt (the rule of docs/feedback-and-webhooks.md), the admin view of who
 * taught it what, and forgetting a user's labels. On main before: one analyst could label 400
 * jobs and be the whole training set, and every flip between two analysts was learnt.
 */

const BOUNDS = { maxShare: 0.2, floor: 2 };

describe('bounded feedback (PostgreSQL, Redis)', () => {
  let p: RealPlatform;
  let gw: Gateway;
  let admin = '';
  const tok: Record<string, string> = {};

  beforeAll(async () => {
    p = await realPlatform();
    await seedUsers(p.store);
    gw = await startGateway(p, {
      config: { feedback: { ratePerHour: 6, maxSharePercent: 20 } },
      deps: {
        learnFeedback: (id) => learnFeedback(p.sql, id, BOUNDS),
        forgetTeacher: (user) => forgetTeacher(p.sql, user, BOUNDS),
      },
    });
    admin = (await login(gw.app, 'admin')).access_token;
    for (const name of ['ann', 'bob', 'cid', 'rat']) {
      const r = await gw.app.inject({
        method: 'POST',
        url: '/api/v1/users',
        headers: bearer(admin),
        payload: { username: name, password: PASSWORD, roles: ['analyst'] },
      });
      expect(r.statusCode, r.body).toBe(201);
      tok[name] = (await login(gw.app, name)).access_token;
    }
  });
  afterAll(async () => {
    await gw?.close();
    await p?.cleanup();
  });

  /** A completed job (its Email stored), ready for feedback. */
  async function job(): Promise<string> {
    const j = newJob();
    await p.store.jobs.create(j);
    await p.store.jobs.complete(j.job_id, sampleResult(0.9), sampleTrace);
    return j.job_id;
  }

  const give = (token: string, id: string, verdict: 'phishing' | 'legitimate') =>
    gw.app.inject({
      method: 'POST',
      url: `/api/v1/analyze/${id}/feedback`,
      headers: bearer(token),
      payload: { verdict },
    });

  const documents = async () => {
    const t = await p.store.classifier.totals();
    return t.phishing + t.ham;
  };

  it('limits one user to TRAWL_FEEDBACK_RATE_PER_HOUR requests, 429 with Retry-After; others go on', async () => {
    const id = await job();
    for (let i = 0; i < 6; i++) {
      expect((await give(tok.rat ?? '', id, i % 2 ? 'phishing' : 'legitimate')).statusCode).toBe(
        200,
      );
    }
    const r = await give(tok.rat ?? '', id, 'phishing');
    expect(r.statusCode).toBe(429);
    expect(r.json().code).toBe('TRAWL_ERR_FEEDBACK_RATE_LIMITED');
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    expect((await give(tok.cid ?? '', id, 'phishing')).statusCode).toBe(200);
  });

  it('two analysts who disagree teach nothing from the job; a higher role decides it', async () => {
    const id = await job();
    const before = await documents();
    expect((await give(tok.ann ?? '', id, 'phishing')).json().learning).toBe('learned');
    expect(await documents()).toBe(before + 1);
    // the flip of another analyst is not learnt: the job is disputed, what it taught unlearnt
    expect((await give(tok.bob ?? '', id, 'legitimate')).json().learning).toBe('disputed');
    expect(await documents()).toBe(before);
    // flipping back and forth teaches nothing more
    expect((await give(tok.bob ?? '', id, 'phishing')).json().learning).toBe('learned');
    expect((await give(tok.bob ?? '', id, 'legitimate')).json().learning).toBe('disputed');
    expect(await documents()).toBe(before);
    // an admin outranks both: their label is learnt, whoever spoke last
    expect((await give(admin, id, 'legitimate')).json().learning).toBe('learned');
    expect((await give(tok.ann ?? '', id, 'phishing')).json().learning).toBe('unchanged');
    const row = await p.sql.query<{ learned: string; learned_by: string }>(
      `SELECT learned, learned_by FROM job_feedback WHERE job_id = $1`,
      [id],
    );
    expect(row.rows[0]).toEqual({ learned: 'legitimate', learned_by: 'admin' });
    expect(await documents()).toBe(before + 1);
  });

  it("holds a user's labels past their share of the training; the admin view shows who taught what", async () => {
    // cid has 1 learnt job (the rate test); the floor of 2 lets one more through, then the share
    const outcomes: string[] = [];
    for (let i = 0; i < 3; i++) {
      outcomes.push((await give(tok.cid ?? '', await job(), 'phishing')).json().learning);
    }
    expect(outcomes).toEqual(['learned', 'capped', 'capped']);
    const view = await gw.app.inject({ url: '/api/v1/feedback/teachers', headers: bearer(admin) });
    expect(view.statusCode, view.body).toBe(200);
    const v = view.json() as {
      documents: number;
      max_share_percent: number;
      teachers: {
        user: string;
        learned: { phishing: number; legitimate: number };
        held: { capped: number; outvoted: number };
        share: number;
      }[];
    };
    expect(v.max_share_percent).toBe(20);
    const cid = v.teachers.find((t) => t.user === 'cid');
    expect(cid?.learned).toEqual({ phishing: 2, legitimate: 0 });
    expect(cid?.held.capped).toBe(2);
    expect(cid?.share).toBeCloseTo(2 / v.documents);
    expect(v.teachers.find((t) => t.user === 'bob')?.held.outvoted).toBe(1);
    // admins only
    const no = await gw.app.inject({
      url: '/api/v1/feedback/teachers',
      headers: bearer(tok.ann ?? ''),
    });
    expect(no.statusCode).toBe(403);
  });

  it('forgetting a user unlearns every label learnt from them and learns the others in their place', async () => {
    const both = await job();
    expect((await give(tok.ann ?? '', both, 'phishing')).json().learning).toBe('learned');
    const before = await documents();
    const r = await forgetTeacher(p.sql, 'cid', BOUNDS);
    // cid's 4 labels: 1 learnt alone (unlearnt now), 2 held at the cap, and 1 beside rat's equal
    // label on the rate-limit job: still learnt, taught by rat now
    expect(r).toEqual({ jobs: 4, changed: 1 });
    expect(await documents()).toBe(before - 1);
    const taught = await p.sql.query<{ n: string }>(
      `SELECT count(*) AS n FROM job_feedback WHERE learned_by = 'rat'`,
    );
    expect(Number(taught.rows[0]?.n)).toBe(1);
    const v = (
      await gw.app.inject({ url: '/api/v1/feedback/teachers', headers: bearer(admin) })
    ).json() as { teachers: { user: string; learned: object; forgotten: number }[] };
    const cid = v.teachers.find((t) => t.user === 'cid');
    expect(cid?.learned).toEqual({ phishing: 0, legitimate: 0 });
    expect(cid?.forgotten).toBe(4);
    // forgetting ann on a job bob disputed leaves bob's label alone, and it is learnt now
    const dis = await job();
    await give(tok.ann ?? '', dis, 'phishing');
    expect((await give(tok.bob ?? '', dis, 'legitimate')).json().learning).toBe('disputed');
    // through the API this time (what `trawl learn --forget ann` calls): admins only, audited
    const denied = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/feedback/teachers/ann/forget',
      headers: bearer(tok.bob ?? ''),
    });
    expect(denied.statusCode).toBe(403);
    const forgot = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/feedback/teachers/ann/forget',
      headers: bearer(admin),
    });
    expect(forgot.statusCode, forgot.body).toBe(200);
    expect(forgot.json()).toMatchObject({ user: 'ann' });
    const audit = await p.store.audit.list({ limit: 5, action: 'feedback.forget' });
    expect(audit.items[0]?.target).toBe('ann');
    const row = await p.sql.query<{ learned: string; learned_by: string }>(
      `SELECT learned, learned_by FROM job_feedback WHERE job_id = $1`,
      [dis],
    );
    expect(row.rows[0]).toEqual({ learned: 'legitimate', learned_by: 'bob' });
  });
});
