/**
 * In-process analysis CPU (`pnpm exec tsx bench/engine/in-process.ts`): the orchestrator's job path
 * with the built-in analyzers in its process (ADR 002, the default of scale-out): the `default`
 * workflow of config/defaults run by createJobRunner over createEmbeddedInvoker, one job at a time,
 * on every message of the corpus (../shared/corpus, parsed once before the clock starts and passed
 * through JSON as the orchestrator reads it from the store). Beside it, in the same run and
 * interleaved, the baseline: the bare analyzer functions (`def.analyze`) called directly on the very
 * emails (with their analysis_context) the first pass gave them. Prints CPU ms per job for each of
 * BENCH_PASSES passes, their medians, and a digest of the outcomes (traces without their timings) to
 * check that a change leaves every result identical.
 *
 * BENCH_PASSES (default 5), BENCH_LIMIT (first n messages of each half; default all),
 * BENCH_CONCURRENCY (jobs in flight in the orchestrated passes; default 1), BENCH_BASELINE=0 (no
 * baseline passes).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createConfigSource,
  createJobRunner,
  snapshotFromFiles,
} from '@trawl/analyzer-orchestrator';
import { builtinPlugins, createEmbeddedInvoker } from '@trawl/analyzers';
import { loadServiceFiles } from '@trawl/config';
import type { AnalyzerAnswer, Email } from '@trawl/contracts';
import { parseRawEmail } from '@trawl/mail';
import type { PluginInvoker } from '@trawl/plugin-client';
import { type AnalyzerDefinition, type PluginDefinition, resolveSettings } from '@trawl/plugin-sdk';
import { loadCorpus } from '../e2e/corpus.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const PASSES = Number(process.env.BENCH_PASSES ?? 5);
const LIMIT = process.env.BENCH_LIMIT === undefined ? undefined : Number(process.env.BENCH_LIMIT);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 1);
/** BENCH_BASELINE=0 skips the bare-analyzer passes (to profile the orchestrated path alone). */
const BASELINE = process.env.BENCH_BASELINE !== '0';

const files = loadServiceFiles({
  configFile: join(root, 'config/defaults/service.yaml'),
  workflowsFile: join(root, 'config/defaults/workflows.yaml'),
});
const service = files.service;
const snapshot = snapshotFromFiles({
  version: files.version,
  service,
  workflows: files.workflows,
  analyzerVersions: files.analyzerVersions,
});
const builtins: Record<string, PluginDefinition> = builtinPlugins({});

const corpus = loadCorpus(LIMIT);
if (!corpus) throw new Error('no corpus at ../shared/corpus');
/** Each job's Email as the orchestrator reads it from the store (JSON text). */
const texts: string[] = [];
for (const m of corpus) {
  try {
    texts.push(JSON.stringify(await parseRawEmail(m.raw)));
  } catch {
    // unparseable: the gateway refuses it, no job
  }
}
/**
 * Fresh Email objects for one pass, made before the clock starts: the analyzers memoise per Email
 * object (the rules view by `email.headers`), so a pass over the objects of the previous one would
 * find its work done.
 */
const freshEmails = (): Email[] => texts.map((t) => JSON.parse(t) as Email);

// ---- the orchestrator's path; the first pass records what each analyzer received
let recording: Array<{ id: string; context: Email['analysis_context'] }> | undefined;
const recorded: Array<Array<{ id: string; context: Email['analysis_context'] }>> = [];
const embedded = createEmbeddedInvoker({
  builtins,
  service: () => service,
  internalApiKey: undefined,
});
const invoker: PluginInvoker = {
  analyze(id, email, o) {
    recording?.push({ id, context: email.analysis_context });
    return embedded.analyze(id, email, o);
  },
  enrich: (id, req, o) => embedded.enrich(id, req, o),
};
const runner = createJobRunner({ invoker, config: createConfigSource(snapshot) });

/** The outcome without its timings, as stable JSON. */
function stable(out: unknown): string {
  return JSON.stringify(out, (k, v: unknown) =>
    k === 'duration_ms' || k === 'started_at_ms' ? undefined : v,
  );
}

const digest = createHash('sha256');
const statuses: Record<string, number> = {};
for (const email of freshEmails()) {
  recording = [];
  const out = await runner('default', email);
  recorded.push(recording);
  recording = undefined;
  digest.update(stable(out));
  const s = out?.status ?? 'none';
  statuses[s] = (statuses[s] ?? 0) + 1;
}
const outcomeDigest = digest.digest('hex').slice(0, 16);

async function orchestratedPass(emails: Email[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < emails.length) {
        const email = emails[next++]!;
        await runner('default', email);
      }
    }),
  );
}

// ---- the baseline: the bare analyzer functions on the same inputs, same stage order
const signal = new AbortController().signal;
const log = { info() {}, warn() {} };
const settingsOf = (def: PluginDefinition): unknown => {
  const a = service.analyzers[def.id]?.settings;
  return resolveSettings(def, a ?? {});
};
const settled = new Map<string, unknown>();
for (const def of Object.values(builtins)) settled.set(def.id, settingsOf(def));
async function baselinePass(emails: Email[]): Promise<void> {
  for (let j = 0; j < emails.length; j++) {
    // the offline stage in parallel, then the rest one by one, as the workflow runs them; each call
    // gets its own shallow copy of the job's Email, as the engine gives
    const offline: Promise<unknown>[] = [];
    for (const c of recorded[j]!) {
      const def = builtins[c.id] as AnalyzerDefinition | undefined;
      if (!def || service.analyzers[c.id]?.enabled === false) continue;
      const email = { ...emails[j]!, analysis_context: c.context };
      const p = Promise.resolve(
        def.analyze(email, { settings: settled.get(c.id), signal, log }),
      ) as Promise<AnalyzerAnswer>;
      if (c.context && Object.keys(c.context).length === 0) {
        offline.push(p);
      } else {
        await Promise.all(offline.splice(0));
        await p;
      }
    }
    await Promise.all(offline);
  }
}

async function cpuMsPerJob(fn: (emails: Email[]) => Promise<void>): Promise<number> {
  const emails = freshEmails();
  const c0 = process.cpuUsage();
  await fn(emails);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000 / emails.length;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

// warm-up of both paths, then interleaved passes
await orchestratedPass(freshEmails());
if (BASELINE) await baselinePass(freshEmails());
const orch: number[] = [];
const base: number[] = [];
for (let i = 0; i < PASSES; i++) {
  orch.push(await cpuMsPerJob(orchestratedPass));
  if (BASELINE) base.push(await cpuMsPerJob(baselinePass));
}
const f = (xs: number[]) => xs.map((x) => x.toFixed(3)).join(' ');
const min = (xs: number[]) => Math.min(...xs);
const diffs = base.length ? orch.map((x, i) => x - base[i]!) : [Number.NaN];
console.log(
  [
    `in-process analysis: workflow default, ${texts.length} jobs per pass (${JSON.stringify(statuses)}), ${CONCURRENCY} in flight, node ${process.version}`,
    `  orchestrated   CPU ms/job: ${f(orch)}  median ${median(orch).toFixed(3)} min ${min(orch).toFixed(3)}`,
    `  bare analyzers CPU ms/job: ${f(base)}  median ${median(base).toFixed(3)} min ${min(base).toFixed(3)}`,
    `  overhead ms/job: median of the pass pairs' differences ${median(diffs).toFixed(3)}, difference of the minimums ${(min(orch) - min(base)).toFixed(3)}`,
    `  outcome digest ${outcomeDigest}`,
  ].join('\n'),
);
