import { randomUUID } from 'node:crypto';
import {
  type AnalysisEvent,
  type AnalysisRequestMessage,
  type Email,
  type Topology,
  type Workflow,
  type WorkflowInput,
  Workflow as WorkflowSchema,
} from '@trawl/contracts';
import type { Broker, Store } from '@trawl/platform';
import { pino } from 'pino';
import { sampleEmail } from '../../../../test/support/sample-email.ts';
import { type ConfigSnapshot, snapshotFromFiles } from '../../src/index.ts';

export const silent = pino({ level: 'silent' });

export const email: Email = sampleEmail;

export function wf(input: WorkflowInput): Workflow {
  return WorkflowSchema.parse(input);
}

export function snapshot(
  version: string,
  workflows: Workflow[],
  analyzers: Record<string, { settings?: Record<string, unknown> }> = {},
): ConfigSnapshot {
  return snapshotFromFiles({
    version,
    workflows,
    service: {
      version: '1',
      platform: { log_level: 'info', debug: false },
      analyzer: { timeout_ms: 5000, min_confidence: 0 },
      workflow: { default_workflow_id: workflows[0]?.id ?? 'default', max_retries: 3 },
      verdict: { thresholds: { low: 0.3, medium: 0.5, high: 0.7, critical: 0.9 } },
      analyzers: Object.fromEntries(
        Object.entries(analyzers).map(([id, a]) => [
          id,
          { enabled: true, settings: a.settings ?? {} },
        ]),
      ),
      plugins: { analyzers: {}, context_providers: {} },
    },
  });
}

/**
 * Creates the job row and publishes its request, as the gateway does: the message without the
 * Email (claim check, ADR 005), or with it as older gateways sent it (`carryEmail`). `emailJson`
 * is stored as the row's Email text instead of `e`'s JSON.
 */
export async function submit(
  store: Pick<Store, 'jobs'>,
  broker: Broker,
  t: Topology,
  workflowId: string,
  e: Email = email,
  opts: { carryEmail?: boolean; emailJson?: string } = {},
): Promise<string> {
  const job_id = randomUUID();
  const email_id = `em-${job_id.slice(0, 8)}`;
  await store.jobs.create({
    job_id,
    email_id,
    workflow_id: workflowId,
    email: e,
    ...(opts.emailJson === undefined ? {} : { email_json: opts.emailJson }),
  });
  const msg: AnalysisRequestMessage = {
    job_id,
    email_id,
    workflow_id: workflowId,
    ...(opts.carryEmail ? { email: e } : {}),
    submitted_at: new Date().toISOString(),
  };
  await broker.publish(t.exchanges.analysis, t.routingKeys.analysisRequested, msg, {
    messageId: job_id,
  });
  return job_id;
}

/** Collects events of trawl.results in an own queue. */
export async function collectEvents(broker: Broker, t: Topology) {
  const q = `${t.exchanges.results}.test.${randomUUID().slice(0, 6)}`;
  await broker.assertQueue(q, { type: 'classic', exclusive: true, autoDelete: true });
  await broker.bindQueue(q, t.exchanges.results, '#');
  const events: AnalysisEvent[] = [];
  const consumer = await broker.consume(
    q,
    async (d) => {
      events.push(d.body as AnalysisEvent);
      await d.ack();
    },
    { prefetch: 100 },
  );
  return { events, queue: q, consumer };
}

export async function waitFor<T>(
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
