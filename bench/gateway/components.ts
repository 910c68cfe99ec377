/**
 * Per-component costs of one gateway submission (profiling aid for `pnpm bench:gateway`):
 * emailId, Email validation, JSON serialisation, and the job insert (one row per statement and
 * group commit) and confirmed publish (20 KB Email and claim check) at a fixed concurrency against
 * the real test servers. Bounded: --n=2000 operations per measure.
 * Run: pnpm exec tsx bench/gateway/components.ts [--n=2000] [--concurrency=32]
 */
import { randomUUID } from 'node:crypto';
import { serializeEmail } from '@trawl/api-gateway';
import { testInfra } from '@trawl/config';
import { createEmailSchema, type Email, emailParser, topology } from '@trawl/contracts';
import { emailId } from '@trawl/mail';
import * as platform from '@trawl/platform';
import { testSchema, uniqueSuffix } from '@trawl/platform/testing';
import { email20k } from './submit-bench.ts';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? 'true'];
  }),
) as Record<string, string>;
const N = Math.min(20_000, Math.max(10, Number(args.n ?? 2000)));
const C = Math.min(128, Math.max(1, Number(args.concurrency ?? 32)));

const { email } = email20k();

function cpu(name: string, n: number, fn: () => unknown): void {
  for (let i = 0; i < Math.min(200, n); i++) fn();
  const t = performance.now();
  for (let i = 0; i < n; i++) fn();
  console.log(`${name.padEnd(40)} ${(((performance.now() - t) / n) * 1000).toFixed(1)} µs/op`);
}

async function concurrent(name: string, n: number, fn: (i: number) => Promise<unknown>) {
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t = performance.now();
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < n) await fn(next++);
    }),
  );
  const s = (performance.now() - t) / 1000;
  const c = process.cpuUsage(cpu0);
  console.log(
    `${name.padEnd(40)} ${(n / s).toFixed(0)} ops/s, this process ${((c.user + c.system) / 1000 / n).toFixed(3)} CPU ms/op (user ${(c.user / 1000 / n).toFixed(3)}) (${n} ops, concurrency ${C})`,
  );
}

const schema = createEmailSchema();
const parsed = schema.parse(email) as Email;
const bodyText = JSON.stringify({ email });
const sent = { body: bodyText, input: (JSON.parse(bodyText) as { email: unknown }).email };
cpu('emailId', 2000, () => emailId(parsed));
cpu('serializeEmail (raw route: id + stringify)', 2000, () => serializeEmail(parsed));
cpu('serializeEmail (JSON route: id + body text)', 2000, () => serializeEmail(parsed, sent));
cpu('Email validation (zod)', 2000, () => schema.parse(email));
cpu('Email validation (emailParser)', 2000, () => emailParser().safeParse(email));
cpu('JSON.stringify(email)', 2000, () => JSON.stringify(parsed));
cpu('JSON.parse(body)', 2000, () => JSON.parse(bodyText));

const { id, json } = serializeEmail(parsed);
const db = await testSchema({ max: Number(args.pool ?? 16) });
try {
  // one row per statement, as before group commit (ADR 005)
  const single = platform.createStore(db.sql, { jobInsertBatch: { maxRows: 1 } });
  const job = (emailJson: string) => ({
    job_id: randomUUID(),
    email_id: id,
    workflow_id: 'w',
    email: parsed,
    email_json: emailJson,
    submitted_by: 'bench',
  });
  await concurrent('store.jobs.create, one row per INSERT', N, () => single.jobs.create(job(json)));
  await concurrent('store.jobs.create (group commit)', N, () => db.store.jobs.create(job(json)));
  await concurrent('store.jobs.create, 200-byte Email', N, () =>
    db.store.jobs.create(job('{"headers":{}}')),
  );
  await concurrent('SELECT 1 (pool round trip)', N, () => db.sql.query('SELECT 1'));
} finally {
  await db.drop();
}

const p = platform as unknown as Record<string, unknown>;
if (typeof p.createRabbitBroker === 'function') {
  const broker = await (
    p.createRabbitBroker as (o: {
      url: string;
      connectionName?: string;
    }) => Promise<platform.Broker>
  )({ url: testInfra().rabbitmqUrl, connectionName: `trawl-bench-${uniqueSuffix()}` });
  const t = topology(`benchc${uniqueSuffix()}`);
  await platform.declareTopology(broker, t);
  const consumer = await broker.consume(t.queues.analysisRequests, (d) => d.ack(), {
    prefetch: 256,
  });
  try {
    await concurrent('broker.publish (confirmed), 20 KB Email', N, (i) =>
      broker.publish(t.exchanges.analysis, t.routingKeys.analysisRequested, {
        job_id: String(i),
        email: parsed,
      }),
    );
    // the message the gateway publishes since ADR 005: the row holds the Email
    await concurrent('broker.publish (confirmed), claim check', N, (i) =>
      broker.publish(t.exchanges.analysis, t.routingKeys.analysisRequested, {
        job_id: randomUUID(),
        email_id: id,
        workflow_id: 'default',
        submitted_at: new Date(i).toISOString(),
      }),
    );
  } finally {
    await consumer.cancel();
    const names = platform.topologyNames(t);
    for (const q of names.queues) await broker.deleteQueue(q).catch(() => undefined);
    for (const e of names.exchanges) await broker.deleteExchange(e).catch(() => undefined);
    await broker.close();
  }
}
process.exit(0);
