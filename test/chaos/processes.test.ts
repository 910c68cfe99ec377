/**
 * Faults of Trawl's own processes while a load runs: SIGKILL of an orchestrator (two replicas), an
 * analyzer failing half its calls, an analyzer that never answers. Each ends with the counts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { account, type ChaosEnv, invariants, loadWithFault, startChaos, ZERO } from './support.ts';

describe('chaos: process faults under load', () => {
  let env: ChaosEnv;
  beforeAll(async () => {
    env = await startChaos({ orchestrators: 2 });
  }, 180_000);
  afterAll(async () => {
    await env?.close();
  }, 60_000);

  it('SIGKILL of an orchestrator: its unacknowledged jobs go to the other replica', async () => {
    const victim = env.cluster.services.find((s) => s.name === 'orchestrator-1');
    if (!victim) throw new Error('no orchestrator-1');
    const r = await loadWithFault(env, {
      count: 120,
      rate: 30,
      workflowId: 'chaos',
      faultAfter: 40,
      fault: async () => {
        victim.child.kill('SIGKILL');
        await victim.exited;
      },
    });
    const c = await account(env, 'orchestrator SIGKILL', r);
    expect(invariants(c)).toEqual(ZERO);
    expect(c.submitted).toBe(120);
    // a replacement for the next tests
    await env.cluster.addOrchestrator();
  }, 180_000);

  it('an analyzer failing half its calls: retried, every job completes', async () => {
    const before = (await env.faults.calls()).flaky;
    const r = await loadWithFault(env, { count: 80, rate: 30, workflowId: 'chaos-flaky' });
    const c = await account(env, 'analyzer fails 1 call in 2', r);
    const calls = (await env.faults.calls()).flaky - before;
    process.stdout.write(
      `chaos analyzer fails 1 call in 2: flaky calls=${calls} for ${c.submitted} jobs\n`,
    );
    expect(invariants(c)).toEqual(ZERO);
    expect(c.completed).toBe(c.submitted);
    expect(calls).toBeGreaterThan(c.submitted);
  }, 180_000);

  it('an analyzer that never answers: cut at its timeout, skipped, every job completes', async () => {
    const r = await loadWithFault(env, { count: 60, rate: 30, workflowId: 'chaos-hang' });
    const c = await account(env, 'analyzer never answers', r);
    expect(invariants(c)).toEqual(ZERO);
    expect(c.completed).toBe(c.submitted);
    expect((await env.faults.calls()).hang).toBeGreaterThanOrEqual(c.submitted);
  }, 180_000);
});
