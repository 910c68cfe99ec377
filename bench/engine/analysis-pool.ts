/**
 * The analysis pool alone (ADR 010, 022): `tsx bench/engine/analysis-pool.ts`. The corpus
 * (`../shared/corpus`) parsed once, then each message's offline analyzers (headers, urls, content,
 * attachments, rules: one batch per message, as a parallel stage makes them) through a pool of
 * BENCH_WORKERS workers (default 2), 16 messages in flight; msgs/s and the process's CPU per message
 * (every thread), BENCH_ROUNDS rounds after a warm-up.
 *
 * `--against=<another checkout>` runs that checkout's pool in the same process too, the rounds
 * alternated (A B, B A, ...), so that a change to the pool is compared in the same window.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAnalysisPool, createEmbeddedInvoker } from '@trawl/analyzers';
import { builtinAnalyzers } from '@trawl/analyzers/eval';
import { corpusDir, findRepoRoot, loadServiceFiles } from '@trawl/config';
import type { Email } from '@trawl/contracts';
import { parseRawEmail } from '@trawl/mail';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const against = process.argv.find((a) => a.startsWith('--against='))?.slice('--against='.length);
const IDS = ['headers', 'urls', 'content', 'attachments', 'rules'];

type Invoke = (id: string, email: Email) => Promise<unknown>;
interface Side {
  name: string;
  invoke: Invoke;
  close(): Promise<void>;
}

function serviceOf(root: string) {
  return loadServiceFiles({
    configFile: join(root, 'config/defaults/service.yaml'),
    workflowsFile: join(root, 'config/defaults/workflows.yaml'),
  }).service;
}

async function thisCheckout(): Promise<Side> {
  const service = serviceOf(findRepoRoot());
  const pool = await createAnalysisPool({ size: WORKERS });
  const inv = createEmbeddedInvoker({
    builtins: builtinAnalyzers,
    service: () => service,
    internalApiKey: undefined,
    pool,
  });
  return {
    name: 'this checkout',
    invoke: (id, email) => inv.analyze(id, email, { timeoutMs: 30_000 }),
    close: () => pool.close(),
  };
}

/** The other checkout's pool, loaded from its own sources (its own module instances). */
async function otherCheckout(root: string): Promise<Side> {
  const a = await import(join(root, 'packages/analyzers/src/index.ts'));
  const { builtinAnalyzers: builtins } = await import(
    join(root, 'packages/analyzers/src/registry.ts')
  );
  const service = serviceOf(root);
  const pool = await a.createAnalysisPool({ size: WORKERS });
  const inv = a.createEmbeddedInvoker({
    builtins,
    service: () => service,
    internalApiKey: undefined,
    pool,
  });
  return {
    name: root,
    invoke: (id, email) => inv.analyze(id, email, { timeoutMs: 30_000 }),
    close: () => pool.close(),
  };
}

const corpus = corpusDir();
if (!corpus) throw new Error('no corpus (../shared/corpus)');
const emails: Email[] = [];
for (const kind of ['phishing', 'ham']) {
  const dir = join(corpus, kind);
  for (const f of readdirSync(dir)) {
    try {
      emails.push(await parseRawEmail(readFileSync(join(dir, f))));
    } catch {
      // a message the parser refuses is not analysed by Trawl either
    }
  }
}

async function round(s: Side): Promise<{ mps: number; cpu: number }> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let i = 0;
  const lane = async () => {
    while (i < emails.length) {
      const e = emails[i++] as Email;
      // the calls of one stage: copies of one Email, as the engine makes them
      await Promise.all(IDS.map((id) => s.invoke(id, { ...e })));
    }
  };
  await Promise.all(Array.from({ length: 16 }, lane));
  const c = process.cpuUsage(c0);
  return {
    mps: emails.length / ((performance.now() - t0) / 1000),
    cpu: (c.user + c.system) / 1000 / emails.length,
  };
}

const sides = [await thisCheckout(), ...(against ? [await otherCheckout(against)] : [])];
for (const s of sides) await round(s); // warm-up
const out = new Map<Side, { mps: number[]; cpu: number[] }>(
  sides.map((s) => [s, { mps: [], cpu: [] }]),
);
for (let r = 0; r < ROUNDS; r++) {
  for (const s of r % 2 ? [...sides].reverse() : sides) {
    const x = await round(s);
    out.get(s)?.mps.push(x.mps);
    out.get(s)?.cpu.push(x.cpu);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
console.log(`analysis pool, ${emails.length} messages, ${WORKERS} workers, ${ROUNDS} rounds`);
for (const [s, v] of out) {
  console.log(
    `${s.name}: msgs/s ${v.mps.map((x) => x.toFixed(0)).join(' ')} (median ${median(v.mps).toFixed(0)}); ` +
      `cpu ms/msg ${v.cpu.map((x) => x.toFixed(2)).join(' ')} (median ${median(v.cpu).toFixed(2)})`,
  );
}
for (const s of sides) await s.close();
