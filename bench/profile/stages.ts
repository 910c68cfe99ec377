/**
 * The stages of the mail path, and the attribution of a V8 CPU profile's samples to them
 * (`pnpm bench:profile`). A sample belongs to the innermost frame of its stack that names a stage
 * (a file of Trawl's own, by path); shared code (the MIME parser and URL extraction of
 * @trawl/mail, the schemas of @trawl/contracts, libraries) is charged to the Trawl frame that
 * called it. A stack with no Trawl frame at all (a socket's data event, a timer) is charged by the
 * innermost library it runs in (pg → store, amqplib → broker, ...).
 */

/** The stages, in the order a message meets them. */
export const STAGES = [
  'SMTP in (retriever-smtp: listener, filter)',
  'mail orchestrator',
  'gateway submission (HTTP, raw parse, job insert)',
  'broker client (publish, consume)',
  'analysis (workflow, analyzers)',
  'orchestrator job path (runner, settlement)',
  'evidence and search terms',
  'campaigns (lure keys, text matching)',
  'store client (SQL, PGlite)',
  'cache client',
  'verdict back (retriever-smtp)',
  're-injection (retriever-smtp → Postfix)',
  'HTTP between parts (fastify, undici)',
  'logging',
  'other Trawl code',
  'other libraries and Node internals',
  'garbage collector',
  'V8 and runtime (program)',
] as const;
type Stage = (typeof STAGES)[number];

/** Trawl files, by path, and the stage their frames decide. First match wins. */
const TRAWL_RULES: [RegExp, Stage][] = [
  [/\/services\/retriever-smtp\/src\/reinjector\.ts$/, 're-injection (retriever-smtp → Postfix)'],
  [
    /\/services\/retriever-smtp\/src\/(inline-analysis|inline-verdicts|job-recorder)\.ts$/,
    'orchestrator job path (runner, settlement)',
  ],
  [
    /\/services\/retriever-smtp\/src\/(verdict-board|policy|headers|header-lines|quarantine-recorder|app)\.ts$/,
    'verdict back (retriever-smtp)',
  ],
  [/\/services\/retriever-smtp\/src\//, 'SMTP in (retriever-smtp: listener, filter)'],
  [/\/services\/mail-orchestrator\/src\//, 'mail orchestrator'],
  [/\/services\/api-gateway\/src\//, 'gateway submission (HTTP, raw parse, job insert)'],
  [/\/(evidence|search-terms)[^/]*\.ts$/, 'evidence and search terms'],
  [
    /\/(campaigns?|campaign-queue|campaign-repository|lure[^/]*)\.ts$/,
    'campaigns (lure keys, text matching)',
  ],
  [/\/services\/analyzer-orchestrator\/src\//, 'orchestrator job path (runner, settlement)'],
  [/\/packages\/(analyzers|workflow-engine)\/src\//, 'analysis (workflow, analyzers)'],
  [/\/services\/analyzers\/src\//, 'analysis (workflow, analyzers)'],
  [/\/packages\/platform\/src\/broker\//, 'broker client (publish, consume)'],
  [/\/packages\/platform\/src\/store\//, 'store client (SQL, PGlite)'],
  [/\/packages\/platform\/src\/cache\//, 'cache client'],
  [/\/packages\/platform\/src\/(logger|service-logger)\.ts$/, 'logging'],
  [/\/packages\/(investigation)\/src\//, 'orchestrator job path (runner, settlement)'],
  [/\/services\/all-in-one\/src\//, 'other Trawl code'],
];

/** Trawl files that never decide: shared code charged to its caller. */
const PASS_THROUGH = /\/packages\/(mail|contracts|config|plugin-client|plugin-sdk)\/src\//;

/** Libraries, by their folder under node_modules, for stacks without a deciding Trawl frame. */
const LIBRARY_RULES: [RegExp, Stage][] = [
  [
    /\/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?(pg|pg-protocol|pg-pool|@electric-sql)\//,
    'store client (SQL, PGlite)',
  ],
  [/\/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?amqplib\//, 'broker client (publish, consume)'],
  [/\/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?ioredis\//, 'cache client'],
  [
    /\/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?(smtp-server|mailauth)\//,
    'SMTP in (retriever-smtp: listener, filter)',
  ],
  [
    /\/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?(nodemailer)\//,
    're-injection (retriever-smtp → Postfix)',
  ],
  [/\/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?(pino|sonic-boom|thread-stream)/, 'logging'],
  [
    /\/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?(fastify|@fastify|find-my-way|light-my-request|undici|avvio)/,
    'HTTP between parts (fastify, undici)',
  ],
];

/** The stages whose leaf functions `--detail` lists: where no Trawl code says more. */
const DETAILED: Partial<Record<Stage, string>> = {
  'other libraries and Node internals': 'other',
  'store client (SQL, PGlite)': 'store',
};

interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[] | undefined;
}
/** The part of a V8 `Profiler.Profile` this reads. */
export interface CpuProfile {
  nodes: ProfileNode[];
  samples?: number[] | undefined;
  timeDeltas?: number[] | undefined;
}

function trawlStage(url: string): Stage | 'pass' | undefined {
  if (url.includes('/node_modules/')) return undefined;
  if (!/\/(packages|services|bench)\//.test(url)) return undefined;
  if (PASS_THROUGH.test(url)) return 'pass';
  for (const [re, stage] of TRAWL_RULES) if (re.test(url)) return stage;
  return 'other Trawl code';
}

function libraryStage(url: string): Stage | undefined {
  for (const [re, stage] of LIBRARY_RULES) if (re.test(url)) return stage;
  return undefined;
}

export interface Attribution {
  /** Samples per stage (idle excluded). */
  samples: Map<Stage, number>;
  /** Samples inside @trawl/mail's MIME parser (parse-raw-email, mime/), by the stage that called it. */
  parse: Map<Stage, number>;
  /** Samples in total (idle excluded). */
  busy: number;
  /** The leaves of the samples of the stages in DETAILED (tagged), most first. */
  unplaced: [string, number][];
}

/**
 * Charges each sample of `profile` to its stage. Samples are counted, not timed: V8 samples at a
 * fixed wall-clock interval, and on a loaded machine the time between two samples holds time the
 * thread waited for a core; the caller scales the counts to the thread's CPU time.
 */
export function attribute(profile: CpuProfile): Attribution {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const memo = new Map<number, { stage: Stage | 'idle'; parse: boolean }>();
  const classify = (id: number): { stage: Stage | 'idle'; parse: boolean } => {
    const hit = memo.get(id);
    if (hit) return hit;
    const leaf = byId.get(id);
    const name = leaf?.callFrame.functionName ?? '';
    let out: { stage: Stage | 'idle'; parse: boolean };
    if (name === '(idle)') out = { stage: 'idle', parse: false };
    else if (name === '(garbage collector)') out = { stage: 'garbage collector', parse: false };
    else if (name === '(program)') out = { stage: 'V8 and runtime (program)', parse: false };
    else {
      let stage: Stage | undefined;
      let library: Stage | undefined;
      let parse = false;
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const url = byId.get(cur)?.callFrame.url ?? '';
        if (/\/packages\/mail\/src\/(parse-raw-email\.ts|mime\/)/.test(url)) parse = true;
        const t = trawlStage(url);
        if (t && t !== 'pass') {
          stage = t;
          break;
        }
        library ??= libraryStage(url);
      }
      out = {
        stage: stage ?? library ?? 'other libraries and Node internals',
        parse,
      };
    }
    memo.set(id, out);
    return out;
  };
  const counts = new Map<Stage, number>();
  const parse = new Map<Stage, number>();
  const unplaced = new Map<string, number>();
  let busy = 0;
  for (const id of profile.samples ?? []) {
    const c = classify(id);
    if (c.stage === 'idle') continue;
    busy++;
    counts.set(c.stage, (counts.get(c.stage) ?? 0) + 1);
    if (c.parse) parse.set(c.stage, (parse.get(c.stage) ?? 0) + 1);
    const tag = DETAILED[c.stage];
    if (tag) {
      const f = byId.get(id)?.callFrame;
      const key = `[${tag}] ${f?.functionName || '(anonymous)'} ${(f?.url ?? '').replace(/^.*node_modules\//, '')}`;
      unplaced.set(key, (unplaced.get(key) ?? 0) + 1);
    }
  }
  return {
    samples: counts,
    parse,
    busy,
    unplaced: [...unplaced].sort((a, b) => b[1] - a[1]).slice(0, 25),
  };
}
