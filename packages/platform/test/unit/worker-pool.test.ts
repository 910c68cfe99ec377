import { afterEach, describe, expect, it } from 'vitest';
import {
  createWorkerPool,
  type WorkerPool,
  type WorkerPoolError,
  type WorkerPoolOptions,
} from '../../src/worker-pool/index.ts';

const entry = new URL('../fixtures/pool-worker.mjs', import.meta.url);

/**
 * The one worker pool (ADR 022): what its users (the analysis pool, the gateway's CPU work) rely on
 * beyond what their own tests show: a worker over its heap limit is replaced and the next task
 * answers; close() rejects every unfinished task and takes no more.
 */
describe('worker pool', () => {
  const made: WorkerPool[] = [];
  const make = (o: Partial<WorkerPoolOptions> = {}) => {
    const p = createWorkerPool({ name: 'test', entry, size: 1, ...o });
    made.push(p);
    return p;
  };
  afterEach(async () => {
    await Promise.all(made.splice(0).map((p) => p.close()));
  });

  it('replaces a worker that runs out of its heap limit; the task fails, the next one answers', async () => {
    const replaced: string[] = [];
    const pool = make({
      resourceLimits: { maxOldGenerationSizeMb: 32 },
      onReplace: (i) => replaced.push(`${i.reason}:${i.label}`),
    });
    await pool.start();
    const err = (await pool
      .run(['hog', null], { timeoutMs: 60_000, label: 'hog' })
      .catch((e: unknown) => e)) as WorkerPoolError;
    expect(err.kind).toBe('exited');
    expect(replaced).toEqual(['exited:hog']);
    expect(await pool.run(['echo', 'after'], { timeoutMs: 60_000 })).toBe('after');
    expect(pool.stats()).toMatchObject({ started: 2, exited: 1, terminated: 0, inFlight: 0 });
  }, 60_000);

  it('runs the tasks of a batch on one shared part, and close() rejects every unfinished task', async () => {
    const pool = make();
    await pool.start();
    const [a, b] = pool.submit(undefined, [
      { input: ['echo', 1], timeoutMs: 60_000 },
      { input: ['echo', 2], timeoutMs: 60_000 },
    ]);
    expect(await Promise.all([a, b])).toEqual([1, 2]);
    const kindOf = (p: Promise<unknown>) =>
      p.then(
        () => 'answered',
        (e: WorkerPoolError) => e.kind,
      );
    const running = kindOf(pool.run(['spin', 30_000], { timeoutMs: 60_000 }));
    const waiting = kindOf(pool.run(['echo', 3], { timeoutMs: 60_000 }));
    await pool.close();
    const after = kindOf(pool.run(['echo', 4], { timeoutMs: 1_000 }));
    const kinds = await Promise.all([running, waiting, after]);
    expect(kinds).toEqual(['closed', 'closed', 'closed']);
    expect(pool.stats().inFlight).toBe(0);
  }, 60_000);
});
