/**
 * `tsx bench/webhooks/finish-statement.ts`: what the webhook events (issue 17) add to the
 * orchestrator's group-committed finish statement on the local PostgreSQL. Batches of 64 jobs are
 * finished with the statement without the webhook CTE ("before"), with it and no endpoint ("after,
 * no endpoint"), and with it and one endpoint subscribed to job.completed and verdict.phishing
 * ("after, 1 endpoint": 64–128 events and deliveries written). The three alternate, round after
 * round, so that the machine's noise falls on all of them alike; medians of the statement's time.
 * Options: --rounds=60 --batch=64
 */
import { randomUUID } from 'node:crypto';
import { buildFinishSql, createStore, pushParams } from '@trawl/platform';
import { testSchema } from '@trawl/platform/testing';

const args = new Map(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k as string, v ?? 'true'];
  }),
);
const ROUNDS = Number(args.get('rounds') ?? 60);
const BATCH = Number(args.get('batch') ?? 64);

const email = {
  headers: {
    subject: 'Your account is locked',
    sender: 'security@bank.example',
    recipients: ['alice@corp.example'],
    date: '2026-11-01T09:00:00Z',
  },
  body_text: 'Verify your account now. '.repeat(80),
  analysis_context: {},
};
const result = (i: number) => ({
  is_phishing: i % 2 === 0,
  confidence: 0.8,
  threat_level: 'high' as const,
  summary: 'Phishing (threat high)',
  recommended_action: 'quarantine' as const,
  indicators: [{ type: 'suspicious_url', value: 'x', confidence: 0.7 }],
  evidence: { blob: 'e'.repeat(4000) },
});
const trace = { workflow_id: 'default', duration_ms: 5, stages: [] };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)] ?? 0;

async function main(): Promise<void> {
  const ts = await testSchema();
  const store = createStore(ts.sql);
  const hook = await store.webhooks.create({
    id: randomUUID(),
    url: 'http://127.0.0.1:9/none',
    events: ['job.completed', 'verdict.phishing'],
    secret: 'whsec_AAAA',
    description: null,
    enabled: false,
    created_by: null,
  });
  const modes = ['before', 'after, no endpoint', 'after, 1 endpoint'] as const;
  const times = new Map<string, number[]>(modes.map((m) => [m, []]));
  try {
    for (let r = -3; r < ROUNDS; r++) {
      for (const mode of modes) {
        await store.webhooks.update(hook.id, { enabled: mode === 'after, 1 endpoint' });
        const ids = Array.from({ length: BATCH }, () => randomUUID());
        await Promise.all(
          ids.map((id) =>
            store.jobs.create({ job_id: id, email_id: id, workflow_id: 'default', email }),
          ),
        );
        const params: unknown[] = [];
        ids.forEach((id, i) => {
          pushParams(
            params,
            {
              job_id: id,
              // a stand-in for the evidence's size (the statement never reads inside it)
              outcome: { status: 'completed', result: result(i) as never, trace },
              terms: ['from:security@bank.example', 'phish:true'],
              sender: { address: 'security@bank.example', at: new Date(), is_phishing: true },
            },
            true,
          );
        });
        const sql = buildFinishSql(BATCH, true, mode !== 'before');
        const t = performance.now();
        // a named prepared statement, as the batcher runs it (planned per connection, not per call)
        const out = await ts.sql.query(sql, params, `bench_finish_${modes.indexOf(mode)}_${BATCH}`);
        const ms = performance.now() - t;
        if (out.rows.length !== BATCH) throw new Error(`finished ${out.rows.length} of ${BATCH}`);
        if (r >= 0) times.get(mode)?.push(ms);
      }
    }
    const events = await ts.sql.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_deliveries',
    );
    console.log(
      `finish statement, ${BATCH} jobs per batch, ${ROUNDS} rounds alternating (PostgreSQL, ${new Date().toISOString()})`,
    );
    for (const m of modes) {
      const xs = times.get(m) ?? [];
      console.log(
        `  ${m.padEnd(20)} median ${median(xs).toFixed(2)} ms  p90 ${p90(xs).toFixed(2)} ms  per job ${(median(xs) / BATCH).toFixed(3)} ms`,
      );
    }
    console.log(`  deliveries written in the "1 endpoint" rounds: ${events.rows[0]?.n}`);
  } finally {
    await ts.drop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
