import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { type RunningService, runService, type ServiceProcess, within } from '../../src/index.ts';

/** A process stand-in: signals are emitted by the test, exit codes recorded. */
function fakeProcess() {
  const events = new EventEmitter();
  const exits: number[] = [];
  let errText = '';
  let onExit: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => {
    onExit = resolve;
  });
  const proc: ServiceProcess = {
    on: (signal, listener) => events.on(signal, listener),
    exit: (code) => {
      exits.push(code);
      onExit(code);
    },
    stderr: {
      write: (text: string) => {
        errText += text;
        return true;
      },
    },
  };
  return { proc, events, exits, exited, stderr: () => errText };
}

describe('runService', () => {
  it('names the service and exits with 1 when start fails', async () => {
    const p = fakeProcess();
    await runService(
      'retriever-imap',
      async () => {
        throw new Error('connect ECONNREFUSED');
      },
      p.proc,
    );
    expect(p.exits).toEqual([1]);
    expect(p.stderr()).toBe('retriever-imap failed to start: connect ECONNREFUSED\n');
  });

  it('stops once on the first signal and exits with 0', async () => {
    const p = fakeProcess();
    const stops: string[] = [];
    await runService(
      'gateway',
      async (): Promise<RunningService> => ({
        stop: async (signal) => {
          stops.push(signal);
        },
      }),
      p.proc,
    );
    expect(p.exits).toEqual([]);
    p.events.emit('SIGTERM');
    p.events.emit('SIGINT');
    expect(await p.exited).toBe(0);
    expect(stops).toEqual(['SIGTERM']);
  });

  it('exits with 1 when the stop throws', async () => {
    const p = fakeProcess();
    await runService(
      'analyzers',
      async () => ({
        stop: async () => {
          throw new Error('pool did not close');
        },
      }),
      p.proc,
    );
    p.events.emit('SIGINT');
    expect(await p.exited).toBe(1);
    expect(p.stderr()).toContain('analyzers: error while stopping: pool did not close');
  });

  it('exits with 1 through the hard-exit timer when the stop never ends', async () => {
    const p = fakeProcess();
    const logged: string[] = [];
    await runService(
      'orchestrator',
      async () => ({
        stop: () => new Promise<void>(() => {}),
        hardExitMs: 10,
        logger: {
          info: (_o, msg) => logged.push(msg ?? ''),
          error: (_o, msg) => logged.push(msg ?? ''),
        },
      }),
      p.proc,
    );
    p.events.emit('SIGTERM');
    expect(await p.exited).toBe(1);
    expect(logged).toEqual(['shutting down', 'stop took too long: exiting']);
  });
});

describe('within', () => {
  it('answers the promise when it settles in time, its rejection too, and a rejection when late', async () => {
    await expect(within(Promise.resolve(7), 1000)).resolves.toBe(7);
    await expect(within(Promise.reject(new Error('no')), 1000)).rejects.toThrow('no');
    const never = new Promise<never>(() => undefined);
    await expect(within(never, 20)).rejects.toThrow('not settled within 20 ms');
  });
});
