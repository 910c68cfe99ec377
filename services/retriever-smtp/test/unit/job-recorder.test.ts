import { createMetrics } from '@trawl/analyzer-orchestrator';
import type { AnalysisEvent, Job } from '@trawl/contracts';
import type { FinishedJob, JobFinish, NewJob } from '@trawl/platform';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { sampleEmail as email } from '../../../../test/support/sample-email.ts';
import { createJobRecorder, type JobRecord } from '../../src/job-recorder.ts';

const silent = pino({ level: 'silent' });

const RESULT = {
  is_phishing: false,
  threat_level: 'none' as const,
  confidence: 0.9,
  summary: 'clean',
  recommended_action: 'allow' as const,
  indicators: [],
};

function record(id: string): JobRecord {
  return {
    job: { job_id: id, email_id: `e-${id}`, workflow_id: 'default', email },
    finish: {
      job_id: id,
      outcome: {
        status: 'completed',
        result: RESULT,
        trace: { workflow_id: 'default', config_version: 'v', duration_ms: 1, stages: [] },
      },
    },
  };
}

/** A store whose statements fail while `down` is true; rows kept in a map. */
function fakeStore() {
  const rows = new Map<string, Job>();
  const state = { down: false, inserts: 0 };
  /** The job ids of each round: the calls made in one turn of the event loop. */
  const rounds: string[][] = [];
  let round: string[] | undefined;
  const unavailable = () => Object.assign(new Error('down'), { code: 'ECONNREFUSED' });
  const jobs = {
    /** As the store's: inserted finished, or null (unchanged) when the id is stored already. */
    async createFinished(j: NewJob, f: JobFinish): Promise<FinishedJob | null> {
      if (!round) {
        round = [];
        rounds.push(round);
        setImmediate(() => {
          round = undefined;
        });
      }
      round.push(j.job_id);
      if (state.down) throw unavailable();
      if (rows.has(j.job_id)) return null;
      state.inserts++;
      const now = new Date().toISOString();
      const o = f.outcome;
      const job: Job = {
        job_id: j.job_id,
        email_id: j.email_id,
        status: o.status,
        workflow: j.workflow_id,
        created_at: now,
        started_at: o.status === 'completed' ? now : null,
        completed_at: now,
      };
      if (o.status === 'completed') job.result = o.result;
      rows.set(j.job_id, job);
      return { job };
    },
    get: async (id: string) => rows.get(id) ?? null,
  };
  return { rows, state, rounds, store: { jobs } };
}

function recorderOver(maxQueued: number, lingerMs?: number) {
  const s = fakeStore();
  const events: AnalysisEvent[] = [];
  const grouped: string[] = [];
  const recorder = createJobRecorder(
    {
      store: s.store,
      settlement: {
        writeJobCache: async () => undefined,
        eventFromJob: (job) => ({
          event: 'analysis.completed',
          job_id: job.job_id,
          email_id: job.email_id,
          workflow: job.workflow,
          at: job.completed_at ?? '',
        }),
        publishEvent: async (e) => {
          events.push(e);
        },
      },
      campaigns: {
        recordLater: (jobId) => {
          grouped.push(jobId);
        },
        settled: async () => undefined,
        drain: async () => undefined,
      },
      metrics: createMetrics(new Registry()),
      log: silent,
      delay: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 5))),
      stop: () => undefined,
    },
    {
      maxQueued,
      maxBatch: 4,
      backoff: { initialMs: 1, maxMs: 5 },
      ...(lingerMs === undefined ? {} : { lingerMs }),
    },
  );
  return { ...s, recorder, events, grouped };
}

describe('job recorder (verdict first, record after)', () => {
  it('writes each record once, with its event and campaign grouping, in rounds of the batch size', async () => {
    const r = recorderOver(100);
    for (let i = 0; i < 10; i++) {
      expect(r.recorder.reserve()).toBe(true);
      r.recorder.record(record(`j${i}`));
    }
    await r.recorder.settled();
    expect([...r.rows.values()].map((j) => j.status)).toEqual(Array(10).fill('completed'));
    expect(r.state.inserts).toBe(10);
    expect(r.events.map((e) => e.job_id).sort()).toEqual([...r.rows.keys()].sort());
    expect(r.grouped).toHaveLength(10);
    expect(r.recorder.size()).toBe(0);
  });

  it('a round that is not full waits for more records; a full one, or close(), does not', async () => {
    const r = recorderOver(100, 60_000);
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 4; i++) {
      r.recorder.reserve();
      r.recorder.record(record(`l${i}`));
      await turn();
    }
    // the fourth record filled the round (maxBatch 4): written at once, in one round
    await r.recorder.settled();
    expect(r.rounds).toEqual([['l0', 'l1', 'l2', 'l3']]);
    r.recorder.reserve();
    r.recorder.record(record('last'));
    await turn();
    expect(r.rows.has('last')).toBe(false);
    await r.recorder.close(5_000);
    expect(r.rounds).toEqual([['l0', 'l1', 'l2', 'l3'], ['last']]);
    expect(r.rows.has('last')).toBe(true);
  });

  it('refuses a place past its bound, counting reserved places, and gives released ones back', () => {
    const r = recorderOver(2);
    expect(r.recorder.reserve()).toBe(true);
    expect(r.recorder.reserve()).toBe(true);
    expect(r.recorder.reserve()).toBe(false);
    r.recorder.release();
    expect(r.recorder.reserve()).toBe(true);
  });

  it('retries while the store is down, then writes every record once; close() flushes the queue', async () => {
    const r = recorderOver(100);
    r.state.down = true;
    for (let i = 0; i < 6; i++) {
      r.recorder.reserve();
      r.recorder.record(record(`d${i}`));
    }
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(r.rows.size).toBe(0);
    expect(r.recorder.size()).toBe(6);
    r.state.down = false;
    await r.recorder.close(5_000);
    expect(r.rows.size).toBe(6);
    expect(r.state.inserts).toBe(6);
    expect(new Set(r.events.map((e) => e.job_id)).size).toBe(6);
    // closed: no new place
    expect(r.recorder.reserve()).toBe(false);
  });

  it('a record whose answer was lost is not written twice: the stored row is settled', async () => {
    const r = recorderOver(10);
    const rec = record('lost');
    // the statement went through, its answer did not
    await r.store.jobs.createFinished(rec.job, rec.finish);
    r.recorder.reserve();
    r.recorder.record(rec);
    await r.recorder.settled();
    expect(r.rows.get('lost')?.status).toBe('completed');
    expect(r.state.inserts).toBe(1);
    expect(r.events.map((e) => e.job_id)).toEqual(['lost']);
  });
});
