import type { ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EMBEDDED_NODE_FLAGS } from '@trawl/all-in-one';
import { forkBench } from '../support/fork-bench.ts';
import type { FromChild, ToChild, TrawlProcessArgs } from './trawl-process.ts';

const HERE = dirname(fileURLToPath(import.meta.url));

/** A running trawl-process.ts: its messages taken in order, by the type expected next. */
export interface TrawlChild {
  child: ChildProcess;
  next: <T extends FromChild['type']>(type: T) => Promise<Extract<FromChild, { type: T }>>;
  send: (m: ToChild) => void;
  /** Asks it to close and waits for its exit. */
  close(): Promise<void>;
}

/**
 * Trawl in a process of its own (bench/profile/trawl-process.ts), so that its CPU is its own and
 * its event loop is not the bench's: bench:profile profiles it, bench:smtp runs the inline milter
 * in it as a deployment runs the milter (a process of its own beside Postfix).
 */
export function trawlChild(args: TrawlProcessArgs): TrawlChild {
  // BENCH_TRAWL_NODE_ARGS: V8/Node flags for Trawl's process only (e.g. --trace-gc)
  // the embedded shape runs with the flags `pnpm start` gives it (ADR 027)
  const child = forkBench(
    join(HERE, 'trawl-process.ts'),
    JSON.stringify(args),
    args.shape === 'embedded' ? EMBEDDED_NODE_FLAGS : [],
  );
  const queue: FromChild[] = [];
  const waiting: ((m: FromChild) => void)[] = [];
  child.on('message', (m: FromChild) => {
    const w = waiting.shift();
    if (w) w(m);
    else queue.push(m);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const next = <T extends FromChild['type']>(type: T) =>
    new Promise<Extract<FromChild, { type: T }>>((resolve, reject) => {
      const take = (m: FromChild) =>
        m.type === type
          ? resolve(m as Extract<FromChild, { type: T }>)
          : reject(new Error(`expected ${type} from Trawl's process, got ${m.type}`));
      const q = queue.shift();
      if (q) take(q);
      else waiting.push(take);
      child.once('exit', (code) => reject(new Error(`Trawl's process exited (${code})`)));
    });
  return {
    child,
    next,
    send: (m) => child.send(m),
    async close() {
      if (child.exitCode === null && child.connected) child.send({ type: 'close' } as ToChild);
      await exited;
    },
  };
}
