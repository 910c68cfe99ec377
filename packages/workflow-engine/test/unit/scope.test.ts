import { describe, expect, it } from 'vitest';
import { type AbortReason, Scope, type ScopeListener } from '../../src/scope.ts';

const reason: AbortReason = { kind: 'stage_failed', message: 'stage s failed' };

function recorder(name: string, log: string[], then?: () => void): ScopeListener {
  return {
    onAbort(r) {
      log.push(`${name}: ${r.message}`);
      then?.();
    },
  };
}

describe('Scope (the engine-internal abort signal)', () => {
  it('tells each listener once, in the order added; later aborts change nothing', () => {
    const s = new Scope();
    const log: string[] = [];
    s.add(recorder('a', log));
    s.add(recorder('b', log));
    s.abort(reason);
    s.abort({ kind: 'deadline', message: 'later' });
    expect(log).toEqual(['a: stage s failed', 'b: stage s failed']);
    expect(s.aborted).toBe(true);
    expect(s.reason).toBe(reason);
  });

  it('a listener removed before or during the dispatch is not told; one added after never is', () => {
    const s = new Scope();
    const log: string[] = [];
    const b = recorder('b', log);
    const c = recorder('c', log);
    s.add(recorder('a', log, () => s.remove(c)));
    s.add(b);
    s.add(c);
    s.remove(b);
    s.abort(reason);
    s.add(recorder('late', log));
    expect(log).toEqual(['a: stage s failed']);
  });

  it('a child scope aborts with its parent, at once when the parent already has', () => {
    const run = new Scope();
    const stage = Scope.childOf(run);
    const log: string[] = [];
    stage.add(recorder('call', log));
    run.abort(reason);
    expect(stage.reason).toBe(reason);
    expect(log).toEqual(['call: stage s failed']);
    expect(Scope.childOf(run).reason).toBe(reason);
  });
});
