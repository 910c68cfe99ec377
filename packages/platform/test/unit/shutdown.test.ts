import { describe, expect, it } from 'vitest';
import { createShutdown } from '../../src/index.ts';

describe('createShutdown', () => {
  it('closes the parts in the reverse order of opening, each once', async () => {
    const closed: string[] = [];
    const s = createShutdown();
    for (const name of ['database', 'broker', 'consumer']) s.add(name, () => closed.push(name));
    expect(s.order()).toEqual(['consumer', 'broker', 'database']);
    await Promise.all([s.close(), s.close()]);
    expect(closed).toEqual(['consumer', 'broker', 'database']);
  });

  it('still closes the rest when a step fails, then throws the first error, logged by name', async () => {
    const closed: string[] = [];
    const warned: string[] = [];
    const s = createShutdown({ warn: (o) => warned.push((o as { step: string }).step) });
    s.add('database', () => closed.push('database'));
    s.add('broker', () => {
      throw new Error('broker stuck');
    });
    s.add('consumer', async () => {
      closed.push('consumer');
    });
    await expect(s.close()).rejects.toThrow('broker stuck');
    expect(closed).toEqual(['consumer', 'database']);
    expect(warned).toEqual(['broker']);
    expect(() => s.add('late', () => undefined)).toThrow(/after close/);
  });
});
