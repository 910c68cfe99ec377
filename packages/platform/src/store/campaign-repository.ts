import { randomUUID } from 'node:crypto';
import type {
  Campaign,
  CampaignDetail,
  CampaignMember,
  JobCampaign,
  LureKind,
} from '@trawl/contracts';
import { badCursor } from '../errors.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { EVIDENCE_OF, iso, jsonParam } from './rows.ts';
import type { SqlClient } from './types.ts';

/**
 * Campaigns (issue 16, migration 008). `assign` is called once per suspicious finished job with its
 * lure keys (computed by the orchestrator, packages/investigation/src/campaigns.ts):
 * `dom:<registrable domain>`, `url:<url>`, `sha:<sha256>`, `txt<band>:<hex>` (a band of a MinHash
 * signature of the text; the whole signature rides along to confirm a band match by similarity).
 */
export interface LureInput {
  job_id: string;
  keys: string[];
  /** The MinHash signature of the job's text (MINHASH_SIZE values, 8 hex digits each). */
  signature?: string | undefined;
  /**
   * The job's recipients (To, Cc, Bcc) and subject as its evidence shows them; without them the
   * store reads them from the stored evidence (parsing it: about 0.15 ms a job).
   */
  recipients?: string[] | undefined;
  subject?: string | undefined;
}

export interface CampaignAssignment {
  campaign: JobCampaign;
  /** Jobs that joined the campaign by this call (the job itself, earlier lone jobs). */
  joined: string[];
  /** Campaigns merged into this one by this call (they no longer exist). */
  merged: string[];
  created: boolean;
}

export interface CampaignRepository {
  /**
   * Records the job's lure keys and puts the job (with the earlier jobs it shares a key with) in a
   * campaign: the one those jobs are in, a new one, or the oldest of several (the others merged
   * into it). Null when the job shares no lure with another job. A job that shares none costs two
   * statements and no lock; grouping is serialised across replicas by an advisory lock.
   */
  assign(input: LureInput): Promise<CampaignAssignment | null>;
  /**
   * `assign` of several jobs, answered in their order: the same groupings and answers as calling
   * `assign` for each in turn, at the cost of one or two statements for the jobs that share no lure
   * and one lock for those that do (group commit of the orchestrator's finished jobs).
   */
  assignMany(inputs: LureInput[]): Promise<(CampaignAssignment | null)[]>;
  /** The campaign of a job, with its counts; null when the job is in none. */
  forJob(jobId: string): Promise<JobCampaign | null>;
  /** Newest activity first; the cursor is opaque. */
  list(q: { limit: number; cursor?: string }): Promise<{
    items: Campaign[];
    next_cursor: string | null;
  }>;
  /** One campaign and a page of its members, newest first; null when unknown. */
  get(id: string, q: { limit: number; cursor?: string }): Promise<CampaignDetail | null>;
}

/** Advisory lock of campaign assignment ("trcp"): one assignment at a time, every replica. */
export const CAMPAIGN_LOCK_KEY = 0x7472_6370;
/**
 * Earlier jobs read per lure key, a text band's included: any one of them tells the campaign (a
 * repeated lure's rows are nearly all members of its one campaign). A band is 4 values of 32 bits:
 * texts that are not alike share one by chance about never, so its rows are candidates worth
 * confirming by the whole signature. A band read 64 until issue 29: 512 rows a text for the one
 * campaign they were nearly all in, the largest cost of recording an inline job in embedded mode.
 */
const PER_KEY = 16;
/** Values of a text's MinHash signature (each 8 hex digits); bands of MINHASH_BAND_ROWS values. */
export const MINHASH_SIZE = 32;
/** Values per band of a MinHash signature. */
export const MINHASH_BAND_ROWS = 4;
/**
 * Least share of equal signature values (an estimate of the Jaccard similarity of the two texts'
 * word pairs) for two texts to be near-identical.
 */
export const MIN_TEXT_SIMILARITY = 0.6;
const SIGNATURE_RE = new RegExp(`^[0-9a-f]{${MINHASH_SIZE * 8}}$`);

/** Share of equal values of two well-formed signatures (SIGNATURE_RE), compared in place. */
function similarityOf(a: string, b: string): number {
  let same = 0;
  for (let v = 0; v < MINHASH_SIZE * 8; v += 8) {
    let i = v;
    while (i < v + 8 && a.charCodeAt(i) === b.charCodeAt(i)) i++;
    if (i === v + 8) same++;
  }
  return same / MINHASH_SIZE;
}

/** Share of equal values of two signatures (0 when either is malformed). */
export function signatureSimilarity(a: string, b: string): number {
  if (!SIGNATURE_RE.test(a) || !SIGNATURE_RE.test(b)) return 0;
  return similarityOf(a, b);
}

/** `dom:x` → `domain:x`, `sha:x` → `attachment:x`, `txt0:…` → `text`, `url:x` as it is. */
export function publicLure(key: string): string {
  if (key.startsWith('dom:')) return `domain:${key.slice(4)}`;
  if (key.startsWith('sha:')) return `attachment:${key.slice(4)}`;
  if (key.startsWith('txt')) return 'text';
  return key;
}

function lureKindOf(key: string): LureKind {
  if (key.startsWith('dom:')) return 'domain';
  if (key.startsWith('sha:')) return 'attachment';
  if (key.startsWith('txt')) return 'text';
  return 'url';
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const ts = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * Campaigns are derived data (grouping is best effort, the verdicts are stored durably by the job's
 * own statement): their writes commit without waiting for the WAL flush (`synchronous_commit` off
 * for that transaction only). A crash loses at most the last moments of grouping, never consistency.
 */
/**
 * CTEs `r` (the key rows looked up, out of `rows`) and `h`: for each distinct key of them, the
 * earlier jobs holding it, with their campaign, read once however many rows of a batch hold it (a
 * wave of one lure brings the same keys in many jobs at once). Rows of a batch (`assignMany`) are
 * (job, key, signature, position of the job in the batch); a job of the batch is earlier than
 * another when its first position is lower ($6: the batch's jobs, $7: their first positions).
 * A row does not see its own job nor the jobs of the batch after it, which hold its key too: the
 * key's read is PER_KEY longer by the jobs of the batch holding it (`held`), so that each row
 * still finds PER_KEY jobs it sees.
 * `h` is MATERIALIZED: inlined (PostgreSQL inlines a CTE read once), the planner may read the
 * keys again per row; materialized, the lock's lookup took 3.6 ms instead of 6.9 on PostgreSQL
 * and 8.5 instead of 14 on PGlite (bench:profile --paths=milter-inline).
 */
const hitsOf = (rows: string) => `r AS (SELECT * FROM ${rows}), rk AS (
    SELECT key, max(held) AS n FROM r GROUP BY key
  ), h AS MATERIALIZED (
    SELECT rk.key, l.job_id, l.signature, m.campaign_id,
      COALESCE(($7::int[])[array_position($6::uuid[], l.job_id)], -1) AS pos
    FROM rk CROSS JOIN LATERAL (
      SELECT x.job_id, x.signature FROM lure_keys x WHERE x.key = rk.key LIMIT ${PER_KEY} + rk.n
    ) l
    LEFT JOIN campaign_members m ON m.job_id = l.job_id
  )`;
/**
 * The answer of a lookup (after hitsOf): of the earlier jobs a key row found, one per campaign
 * (any member tells the campaign; of a text band, one per campaign and signature, since the
 * similarity is the signature's) and every lone job (each joins). The same groupings as every row
 * found, in a few rows where a repeated campaign holds dozens of jobs per key; the campaign's age
 * as epoch milliseconds (no timestamp for the client to parse).
 */
const MATCHES = `SELECT d.ord, d.job_id::text AS job_id, d.signature, d.campaign_id::text AS campaign_id,
    floor(extract(epoch FROM c.created_at) * 1000)::float8 AS campaign_created
  FROM (
    SELECT DISTINCT ON (r.ord, h.campaign_id,
        CASE WHEN h.campaign_id IS NULL THEN h.job_id END, h.signature)
      r.ord::int AS ord, h.job_id, h.signature, h.campaign_id
    FROM r JOIN h ON h.key = r.key AND h.job_id <> r.job_id AND h.pos <= r.pos
  ) d LEFT JOIN campaigns c ON c.id = d.campaign_id`;
const ROWS = `k AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::int[])
      WITH ORDINALITY AS k(job_id, key, signature, pos, held, ord)
  )`;
/**
 * Records the keys of the rows and answers the earlier jobs holding one of them (one snapshot),
 * for the rows whose job is looked up ($8: a job likely to share a lure goes to the lock at once).
 */
const LOOK_SQL = `WITH k AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::int[], $8::bool[])
      WITH ORDINALITY AS k(job_id, key, signature, pos, held, look, ord)
  ), async AS (
    SELECT set_config('synchronous_commit', 'off', true) AS v
  ), ins AS (
    INSERT INTO lure_keys (key, job_id, signature) SELECT key, job_id, signature FROM k, async
    ON CONFLICT DO NOTHING
  ), ${hitsOf('k WHERE k.look')}
  ${MATCHES}`;
/** The earlier jobs holding a key of the rows (their keys are stored already). */
const FIND_SQL = `WITH ${ROWS}, ${hitsOf('k')} ${MATCHES}`;
/**
 * FIND_SQL under the campaign lock, with a row of `ord` 0 for each job of the batch ($6) that is a
 * campaign member already (assigned before: ADD_MANY_SQL adds it to no other campaign).
 */
const FIND_LOCKED_SQL = `${FIND_SQL}
  UNION ALL SELECT 0, m.job_id::text, NULL::text, m.campaign_id::text, NULL::float8
  FROM campaign_members m WHERE m.job_id = ANY($6::uuid[])`;

/** Recipients of a job as its evidence shows them (To, Cc, Bcc), lower-cased, each once. */
const RECIPIENTS_OF = (j: string) => `COALESCE((SELECT jsonb_agg(DISTINCT lower(a))
    FROM (SELECT ${EVIDENCE_OF(j)}->'message' AS m) e, jsonb_array_elements_text(
      COALESCE(e.m->'to', '[]'::jsonb) || COALESCE(e.m->'cc', '[]'::jsonb)
      || COALESCE(e.m->'bcc', '[]'::jsonb)) a), '[]'::jsonb)`;

/**
 * Adds the members of joins (of one lock transaction, in one statement: issue 29's campaigns
 * written per batch) to their campaigns: each join `q` ($1) adds its jobs ($3, with the lure each
 * matched, $4; their recipients $5 and subjects $6 when the orchestrator gave them, else read from
 * the stored evidence) to campaign $2, with their recipients, reporters and search terms
 * (`camp:<id>`); $7/$8 pair campaigns with the lure kinds the joins add. Answered per join, in
 * join order, with its campaign's counts as they stand after it (as if each join were written in
 * turn): a recipient or reporter is counted by the first join that brings it, and an empty subject
 * takes the first join's that has one (its earliest member's).
 */
const ADD_MANY_SQL = `WITH n AS (
    SELECT * FROM unnest($1::int[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[])
      AS n(q, campaign_id, job_id, matched, rcpts, subj)
  ), added AS (
    INSERT INTO campaign_members (job_id, campaign_id, matched, recipients, reporter)
    SELECT j.job_id, n.campaign_id, n.matched,
      CASE WHEN n.rcpts IS NULL THEN ${RECIPIENTS_OF('j')}
        ELSE COALESCE((SELECT jsonb_agg(DISTINCT lower(a))
          FROM jsonb_array_elements_text(n.rcpts::jsonb) a), '[]'::jsonb) END,
      left(j.origin->'report'->>'reporter', 320)
    FROM n JOIN jobs j ON j.job_id = n.job_id
    ON CONFLICT (job_id) DO NOTHING
    RETURNING job_id, campaign_id, recipients, reporter
  ), a AS (
    SELECT n.q, d.job_id, d.campaign_id, d.recipients, d.reporter, n.subj
    FROM added d JOIN n ON n.job_id = d.job_id
  ), terms AS (
    INSERT INTO job_terms (kind, value, created_at, job_id)
    SELECT 'camp', a.campaign_id::text, j.created_at, j.job_id FROM a JOIN jobs j USING (job_id)
    ON CONFLICT DO NOTHING
  ), rc AS (
    SELECT a.campaign_id, r AS address, min(a.q) AS q
    FROM a, jsonb_array_elements_text(a.recipients) r GROUP BY 1, 2
  ), rcpt AS (
    INSERT INTO campaign_recipients (campaign_id, address) SELECT campaign_id, address FROM rc
    ON CONFLICT DO NOTHING RETURNING campaign_id, address
  ), rp AS (
    SELECT a.campaign_id, lower(a.reporter) AS address, min(a.q) AS q
    FROM a WHERE a.reporter IS NOT NULL GROUP BY 1, 2
  ), rep AS (
    INSERT INTO campaign_reporters (campaign_id, address) SELECT campaign_id, address FROM rp
    ON CONFLICT DO NOTHING RETURNING campaign_id, address
  ), e AS (
    SELECT x.q, x.campaign_id,
      (SELECT count(*) FROM a WHERE a.q = x.q) AS members,
      (SELECT count(*) FROM rcpt JOIN rc USING (campaign_id, address) WHERE rc.q = x.q) AS rcpts,
      (SELECT count(*) FROM rep JOIN rp USING (campaign_id, address) WHERE rp.q = x.q) AS reps
    FROM (SELECT DISTINCT q, campaign_id FROM n) x
  ), s AS (
    SELECT DISTINCT ON (a.q) a.q, a.campaign_id,
      left(COALESCE(a.subj, ${EVIDENCE_OF('j')}->'message'->>'subject'), 300) AS subject
    FROM a JOIN jobs j USING (job_id) ORDER BY a.q, j.created_at
  ), upd AS (
    UPDATE campaigns c SET
      size = c.size + t.members,
      recipients = c.recipients + t.rcpts,
      reporters = c.reporters + t.reps,
      last_seen_at = now(),
      lures = (SELECT COALESCE(jsonb_agg(DISTINCT x ORDER BY x), '[]'::jsonb) FROM (
        SELECT jsonb_array_elements_text(c.lures) AS x
        UNION SELECT k.kind FROM unnest($7::uuid[], $8::text[]) AS k(campaign_id, kind)
        WHERE k.campaign_id = c.id) u),
      subject = CASE WHEN c.subject <> '' THEN c.subject ELSE COALESCE((
        SELECT s.subject FROM s WHERE s.campaign_id = c.id AND s.subject <> ''
        ORDER BY s.q LIMIT 1), '') END
    FROM (SELECT campaign_id, sum(members) AS members, sum(rcpts) AS rcpts, sum(reps) AS reps
      FROM e GROUP BY campaign_id) t
    WHERE c.id = t.campaign_id
    RETURNING c.id, c.size, c.recipients, c.reporters, t.members, t.rcpts, t.reps
  )
  SELECT e.q, u.id::text AS id,
    (u.size - u.members + sum(e.members) OVER w)::int AS size,
    (u.recipients - u.rcpts + sum(e.rcpts) OVER w)::int AS recipients,
    (u.reporters - u.reps + sum(e.reps) OVER w)::int AS reporters,
    ARRAY(SELECT a.job_id::text FROM a WHERE a.q = e.q) AS joined
  FROM e JOIN upd u ON u.id = e.campaign_id
  WINDOW w AS (PARTITION BY e.campaign_id ORDER BY e.q)`;

interface MatchRow {
  /** 1-based row of the statement's keys. */
  ord: number;
  job_id: string;
  signature: string | null;
  campaign_id: string | null;
  /** The campaign's created_at in epoch milliseconds (float8). */
  campaign_created: unknown;
}

interface CampaignRow {
  id: string;
  size: number;
  recipients: number;
  reporters: number;
  subject: string;
  lures: unknown;
  created_at: unknown;
  last_seen_at: unknown;
  cursor_ts: string;
}

const CAMPAIGN_COLUMNS = `id::text AS id, size, recipients, reporters, subject, lures, created_at,
  last_seen_at, ${ts('last_seen_at')} AS cursor_ts`;

function toCampaign(r: CampaignRow): Campaign {
  const lures = (typeof r.lures === 'string' ? JSON.parse(r.lures) : r.lures) as LureKind[];
  return {
    id: r.id,
    size: Number(r.size),
    recipients: Number(r.recipients),
    reporters: Number(r.reporters),
    subject: r.subject,
    lures,
    first_seen: iso(r.created_at),
    last_seen: iso(r.last_seen_at),
  };
}

function pageCursor(cursor: string | undefined): [string, string] | undefined {
  if (cursor === undefined) return undefined;
  const [at, id] = decodeCursor(cursor, 2) as [string, string];
  if (Number.isNaN(Date.parse(at)) || !UUID_RE.test(id)) throw badCursor();
  return [at, id];
}

/** A job of an `assignMany` batch with keys to group by. */
interface BatchJob {
  /** Its index in the caller's list. */
  index: number;
  /** Its position among the batch's jobs with keys (their order is the grouping order). */
  pos: number;
  job_id: string;
  keys: string[];
  signature: string | undefined;
  recipients: string[] | undefined;
  subject: string | undefined;
}

/** The batch's jobs, each once with its first position: what a row of the batch does not see. */
interface BatchOrder {
  ids: string[];
  first: number[];
  /** How many jobs of the batch hold each key. */
  held: Map<string, number>;
}

interface KeyRow {
  job: BatchJob;
  key: string;
}

/**
 * The parameters of FIND_SQL (and LOOK_SQL, with `look`: whether a job is looked up) for the keys
 * of `jobs`, and whose key each row is.
 */
function rowsOf(
  jobs: BatchJob[],
  order: BatchOrder,
  look?: (job: BatchJob) => boolean,
): { params: unknown[]; owner: KeyRow[] } {
  const looked: boolean[] = [];
  const ids: string[] = [];
  const keys: string[] = [];
  const sigs: (string | null)[] = [];
  const pos: number[] = [];
  const held: number[] = [];
  const owner: KeyRow[] = [];
  for (const job of jobs) {
    for (const key of job.keys) {
      ids.push(job.job_id);
      keys.push(key);
      sigs.push(key.startsWith('txt') ? (job.signature ?? null) : null);
      pos.push(job.pos);
      held.push(order.held.get(key) ?? 1);
      owner.push({ job, key });
      if (look) looked.push(look(job));
    }
  }
  const params = [ids, keys, sigs, pos, held, order.ids, order.first];
  return { params: look ? [...params, looked] : params, owner };
}

interface Match {
  key: string;
  row: MatchRow;
}

/**
 * Whether an earlier job's text is alike a job's (their signatures, the job's well-formed): each
 * earlier signature is checked once per job signature, however many bands and rows carry it.
 */
function textAlike(): (sig: string, other: string) => boolean {
  const seen = new Map<string, Map<string, boolean>>();
  return (sig, other) => {
    let of = seen.get(sig);
    if (!of) {
      of = new Map();
      seen.set(sig, of);
    }
    let alike = of.get(other);
    if (alike === undefined) {
      alike =
        other === sig ||
        (SIGNATURE_RE.test(other) && similarityOf(sig, other) >= MIN_TEXT_SIMILARITY);
      of.set(other, alike);
    }
    return alike;
  };
}

/** The earlier jobs that share a lure, per job (a text band only when the whole texts are alike). */
function matchesOf(rows: MatchRow[], owner: KeyRow[]): Map<BatchJob, Match[]> {
  const out = new Map<BatchJob, Match[]>();
  const alike = textAlike();
  for (const row of [...rows].sort((a, b) => Number(a.ord) - Number(b.ord))) {
    const o = owner[Number(row.ord) - 1];
    if (!o) continue;
    const sig = o.job.signature;
    if (
      o.key.startsWith('txt') &&
      (sig === undefined || row.signature === null || !alike(sig, row.signature))
    ) {
      continue;
    }
    const l = out.get(o.job);
    if (l) l.push({ key: o.key, row });
    else out.set(o.job, [{ key: o.key, row }]);
  }
  return out;
}

/**
 * What the lock transaction changed so far, for the rows its one lookup read before (the campaign
 * of a job and the age of a campaign as the statements so far left them).
 */
interface LockedState {
  /** Jobs that joined a campaign (or left one: null) in this transaction. */
  campaignOf: Map<string, string | null>;
  /** Campaigns merged into another in this transaction. */
  mergedInto: Map<string, string>;
  /** created_at (ms) of the campaigns this transaction created or merged into. */
  createdAt: Map<string, number>;
  /** The order in which this transaction created its campaigns (they share its now()). */
  createdSeq: Map<string, number>;
  /** The transaction's now() (ms). */
  now: number;
  /** Jobs of the batch that were campaign members already when the lock was taken. */
  members: Set<string>;
  /** Joins of existing campaigns not written yet (ADD_MANY_SQL, by `flushJoins`). */
  joins: Join[];
}

/** A job joining a campaign (with the lone jobs it matched), written by `flushJoins`. */
interface Join {
  job: BatchJob;
  /** Campaigns merged into the target for it, and whether the target is new: its answer's. */
  merged: string[];
  created: boolean;
  target: string;
  /** The job, then the lone jobs it matched. */
  jobs: string[];
  why: string[];
  kinds: string[];
  rcpts: (string | null)[];
  subjects: (string | null)[];
}

/**
 * Writes the joins waiting in `state` in one statement (ADD_MANY_SQL) and answers each job. A job
 * the statement did not add (deleted by retention meanwhile) is in no campaign again, as a lookup
 * would read it.
 */
async function flushJoins(
  tx: SqlClient,
  state: LockedState,
  out: (CampaignAssignment | null)[],
): Promise<void> {
  const joins = state.joins.splice(0);
  if (joins.length === 0) return;
  const q: number[] = [];
  const target: string[] = [];
  const jobs: string[] = [];
  const why: string[] = [];
  const rcpts: (string | null)[] = [];
  const subjects: (string | null)[] = [];
  const kindOf: string[] = [];
  const kind: string[] = [];
  joins.forEach((j, i) => {
    j.jobs.forEach((id, k) => {
      q.push(i);
      target.push(j.target);
      jobs.push(id);
      why.push(j.why[k] as string);
      rcpts.push(j.rcpts[k] ?? null);
      subjects.push(j.subjects[k] ?? null);
    });
    for (const k of j.kinds) {
      kindOf.push(j.target);
      kind.push(k);
    }
  });
  const r = await tx.query<{
    q: number;
    id: string;
    size: number;
    recipients: number;
    reporters: number;
    joined: string[];
  }>(ADD_MANY_SQL, [q, target, jobs, why, rcpts, subjects, kindOf, kind], 'campaign_add_many');
  const added = new Set<string>();
  for (const row of r.rows) {
    const j = joins[Number(row.q)];
    if (!j) continue;
    for (const id of row.joined) added.add(id);
    out[j.job.index] = assignmentOf(row, j.merged, j.created);
  }
  for (const id of jobs) if (!added.has(id)) state.campaignOf.delete(id);
}

/**
 * Groups one job that shares a lure, under the campaign lock: the campaign it joins (the oldest of
 * those its matches are in, the others merged into it, or a new one) and the lone jobs it matched.
 * `matches` were read at the start of the transaction; `state` brings them up to date with what
 * the jobs before this one changed (as a lookup made now would read them). Its answer is written
 * to `out` (a join of one existing campaign once the batch's joins are written: `flushJoins`).
 */
async function assignLocked(
  tx: SqlClient,
  job: BatchJob,
  matches: Match[],
  state: LockedState,
  out: (CampaignAssignment | null)[],
): Promise<void> {
  const lone = new Map<string, string>();
  const campaigns = new Map<string, number>();
  const matched: string[] = [];
  for (const { key, row: m } of matches) {
    matched.push(key);
    let c = state.campaignOf.has(m.job_id)
      ? (state.campaignOf.get(m.job_id) ?? null)
      : m.campaign_id;
    for (let into = c && state.mergedInto.get(c); into; into = state.mergedInto.get(into)) c = into;
    if (c) campaigns.set(c, state.createdAt.get(c) ?? Number(m.campaign_created));
    else if (!lone.has(m.job_id)) lone.set(m.job_id, key);
  }
  if (matched.length === 0) return;
  const seq = (id: string) => state.createdSeq.get(id) ?? -1;
  const byAge = [...campaigns.entries()].sort(
    (a, b) => a[1] - b[1] || seq(a[0]) - seq(b[0]) || (a[0] < b[0] ? -1 : 1),
  );
  let target = byAge[0]?.[0];
  const created = target === undefined;
  const first = matched[0] as string;
  const jobs = [job.job_id, ...lone.keys()];
  const why = [first, ...lone.values()].map(publicLure);
  const kinds = [...new Set(matched.map(lureKindOf))];
  // the job's own recipients and subject when the orchestrator gave them; lone jobs' from the store
  const fromStore: null[] = new Array(lone.size).fill(null);
  const rcpts = [job.recipients ? jsonParam(job.recipients) : null, ...fromStore];
  const subjects = [job.subject ?? null, ...fromStore];
  // (a job that is a member already, or joined by this transaction, adds nothing: written alone)
  const member = state.members.has(job.job_id) || state.campaignOf.has(job.job_id);
  // Joining one existing campaign waits to be written with the batch's other joins (the campaign's
  // row is written once a batch, not once a job). A new campaign, a merge, or a job that is a
  // member already writes the joins before it first, then its own.
  const later = target !== undefined && byAge.length === 1 && !member;
  let others: string[] = [];
  if (!later) await flushJoins(tx, state, out);
  if (target === undefined) {
    target = randomUUID();
    await tx.query('INSERT INTO campaigns (id) VALUES ($1)', [target], 'campaign_create');
    state.createdSeq.set(target, state.createdSeq.size);
    state.createdAt.set(target, state.now);
  } else {
    state.createdAt.set(target, byAge[0]?.[1] as number);
    others = byAge.slice(1).map(([id]) => id);
  }
  if (others.length > 0) {
    await mergeInto(tx, target, others);
    for (const o of others) state.mergedInto.set(o, target);
  }
  // what the jobs after it read is brought up to date (flushJoins undoes it for a job not added)
  for (const id of jobs) state.campaignOf.set(id, target);
  state.joins.push({ job, target, jobs, why, kinds, rcpts, subjects, merged: others, created });
  if (later) return;
  await flushJoins(tx, state, out);
  const a = out[job.index];
  if (a && created && a.campaign.size < 2) {
    // the earlier jobs it matched are gone (deleted by retention): no campaign of one
    await tx.query(`DELETE FROM job_terms WHERE kind = 'camp' AND value = $1`, [target]);
    await tx.query('DELETE FROM campaigns WHERE id = $1', [target]);
    for (const id of a.joined) state.campaignOf.set(id, null);
    out[job.index] = null;
  }
}

/** The answer of a job from the counts its members' statement answered. */
function assignmentOf(
  row: { id: string; size: number; recipients: number; reporters: number; joined: string[] },
  merged: string[],
  created: boolean,
): CampaignAssignment {
  return {
    campaign: {
      id: row.id,
      size: Number(row.size),
      recipients: Number(row.recipients),
      reporters: Number(row.reporters),
    },
    joined: row.joined,
    merged,
    created,
  };
}

export function createCampaignRepository(sql: SqlClient): CampaignRepository {
  /** Lure keys that matched an earlier job lately (a hint: see assignMany). */
  const recent = recentKeys(RECENT_KEYS);
  async function assignMany(inputs: LureInput[]): Promise<(CampaignAssignment | null)[]> {
    const out: (CampaignAssignment | null)[] = inputs.map(() => null);
    const batch: BatchJob[] = [];
    inputs.forEach((input, index) => {
      const sig = input.signature;
      const sigOk = sig !== undefined && SIGNATURE_RE.test(sig);
      // a text key without a well-formed signature to confirm it by is dropped
      const keys = [...new Set(input.keys)].filter((k) => sigOk || !k.startsWith('txt'));
      if (keys.length === 0) return;
      const job_id = input.job_id.toLowerCase();
      batch.push({
        index,
        pos: batch.length,
        job_id,
        keys,
        signature: sigOk ? sig : undefined,
        recipients: input.recipients,
        subject: input.subject,
      });
    });
    if (batch.length === 0) return out;
    const firstPos = new Map<string, number>();
    for (const j of batch) if (!firstPos.has(j.job_id)) firstPos.set(j.job_id, j.pos);
    const held = new Map<string, number>();
    for (const j of batch) for (const k of j.keys) held.set(k, (held.get(k) ?? 0) + 1);
    const order: BatchOrder = { ids: [...firstPos.keys()], first: [...firstPos.values()], held };
    // Fast path, no lock: most jobs share no lure. The keys of the whole batch are stored and looked
    // up in one statement, then the jobs that matched nothing are looked up again in a later
    // snapshot: of two jobs stored at the same time with a key in common, the one whose second look
    // comes last sees the other. A job of the batch sees the jobs before it, never those after.
    const sharing = new Set<BatchJob>();
    // A job holding a lure that grouped a job lately is likely to share one too: its keys are
    // stored by the first statement but not looked up there, and it goes to the lock at once,
    // whose lookup it needs anyway (a repeated lure looked up once, not twice). Of it and a job
    // stored at the same time, the one looked up last still sees the other: the lock's lookup
    // comes after its keys are stored, a second look after the other's.
    for (const j of batch) if (j.keys.some((k) => recent.has(k))) sharing.add(j);
    let pending = batch;
    for (let look = 0; look < 2 && pending.length > 0; look++) {
      const { params, owner } =
        look === 0 ? rowsOf(pending, order, (j) => !sharing.has(j)) : rowsOf(pending, order);
      const text = look === 0 ? LOOK_SQL : FIND_SQL;
      // A statement of several jobs is planned for its own rows (unnamed: a custom plan). A plan
      // cached while lure_keys was small (a new database, before its first ANALYZE) reads the
      // whole table once per row: 500 rows of a batch made that seconds of PostgreSQL CPU.
      const name =
        pending.length > 1 ? undefined : look === 0 ? 'campaign_look' : 'campaign_look_again';
      // The plan of a statement of several jobs' keys is costed above jit_above_cost (by the
      // default settings) and JIT compiling it takes 100 times what running it does (0.4 s against
      // 5 ms for 64 jobs, bench:campaigns --batch 64): the store's connections run with JIT off
      // (pg-client.ts), so this is one statement, not a transaction that turns it off first.
      const rows = (await sql.query<MatchRow>(text, params, name)).rows;
      for (const j of matchesOf(rows, owner).keys()) sharing.add(j);
      pending = pending.filter((j) => !sharing.has(j));
    }
    if (sharing.size === 0) return out;
    // Then the jobs that share a lure, in the batch's order, under one lock (every replica): one
    // lookup of all their keys, brought up to date in memory with what each job changes.
    await sql.transaction(async (tx) => {
      const lock = await tx.query<{ now: unknown }>(
        `SELECT pg_advisory_xact_lock($1), set_config('synchronous_commit', 'off', true),
           set_config('jit', 'off', true),
           floor(extract(epoch FROM now()) * 1000)::float8 AS now`,
        [CAMPAIGN_LOCK_KEY],
        'campaign_lock',
      );
      const jobs = batch.filter((j) => sharing.has(j));
      const { params, owner } = rowsOf(jobs, order);
      const found = await tx.query<MatchRow>(
        FIND_LOCKED_SQL,
        params,
        jobs.length > 1 ? undefined : 'campaign_match',
      );
      const matches = matchesOf(found.rows, owner);
      for (const list of matches.values()) for (const m of list) recent.add(m.key);
      const state: LockedState = {
        campaignOf: new Map(),
        mergedInto: new Map(),
        createdAt: new Map(),
        createdSeq: new Map(),
        now: Number(lock.rows[0]?.now),
        members: new Set(found.rows.filter((r) => Number(r.ord) === 0).map((r) => r.job_id)),
        joins: [],
      };
      for (const job of jobs) {
        await assignLocked(tx, job, matches.get(job) ?? [], state, out);
      }
      await flushJoins(tx, state, out);
    });
    return out;
  }

  return {
    async assign(input) {
      return (await assignMany([input]))[0] ?? null;
    },

    assignMany,

    async forJob(jobId) {
      const r = await sql.query<{
        id: string;
        size: number;
        recipients: number;
        reporters: number;
      }>(
        `SELECT c.id::text AS id, c.size, c.recipients, c.reporters
         FROM campaign_members m JOIN campaigns c ON c.id = m.campaign_id WHERE m.job_id = $1`,
        [jobId],
        'campaign_for_job',
      );
      const row = r.rows[0];
      return row
        ? {
            id: row.id,
            size: Number(row.size),
            recipients: Number(row.recipients),
            reporters: Number(row.reporters),
          }
        : null;
    },

    async list(q) {
      const limit = Math.max(1, Math.min(200, Math.trunc(q.limit)));
      const after = pageCursor(q.cursor);
      const r = await sql.query<CampaignRow>(
        `SELECT ${CAMPAIGN_COLUMNS} FROM campaigns
         ${after ? 'WHERE (last_seen_at, id) < ($2::timestamptz, $3::uuid)' : ''}
         ORDER BY last_seen_at DESC, id DESC LIMIT $1`,
        after ? [limit + 1, after[0], after[1]] : [limit + 1],
      );
      const rows = r.rows.slice(0, limit);
      const last = rows[rows.length - 1];
      return {
        items: rows.map(toCampaign),
        next_cursor: r.rows.length > limit && last ? encodeCursor([last.cursor_ts, last.id]) : null,
      };
    },

    async get(id, q) {
      if (!UUID_RE.test(id)) return null;
      const c = await sql.query<CampaignRow>(
        `SELECT ${CAMPAIGN_COLUMNS} FROM campaigns WHERE id = $1`,
        [id],
      );
      const row = c.rows[0];
      if (!row) return null;
      const limit = Math.max(1, Math.min(200, Math.trunc(q.limit)));
      const after = pageCursor(q.cursor);
      const m = await sql.query<MemberRow>(
        `SELECT m.job_id::text AS job_id, j.created_at, m.joined_at, m.matched, m.recipients,
           m.reporter, j.status,
           ev.m->>'subject' AS subject, ev.m->'from'->>'address' AS sender,
           j.result->'is_phishing' AS is_phishing, j.result->>'threat_level' AS threat_level,
           j.result->>'recommended_action' AS recommended_action,
           j.result->'confidence' AS confidence, ${ts('m.joined_at')} AS cursor_ts
         FROM campaign_members m JOIN jobs j ON j.job_id = m.job_id,
           LATERAL (SELECT ${EVIDENCE_OF('j')}->'message' AS m) ev
         WHERE m.campaign_id = $1
         ${after ? 'AND (m.joined_at, m.job_id) < ($3::timestamptz, $4::uuid)' : ''}
         ORDER BY m.joined_at DESC, m.job_id DESC LIMIT $2`,
        after ? [id, limit + 1, after[0], after[1]] : [id, limit + 1],
      );
      const rows = m.rows.slice(0, limit);
      const last = rows[rows.length - 1];
      return {
        ...toCampaign(row),
        members: rows.map(toMember),
        next_cursor:
          m.rows.length > limit && last ? encodeCursor([last.cursor_ts, last.job_id]) : null,
      };
    },
  };
}

interface MemberRow {
  job_id: string;
  created_at: unknown;
  joined_at: unknown;
  matched: string;
  recipients: unknown;
  reporter: string | null;
  status: CampaignMember['status'];
  subject: string | null;
  sender: string | null;
  is_phishing: unknown;
  threat_level: string | null;
  recommended_action: string | null;
  confidence: unknown;
  cursor_ts: string;
}

function toMember(r: MemberRow): CampaignMember {
  const recipients = (
    typeof r.recipients === 'string' ? JSON.parse(r.recipients) : r.recipients
  ) as string[];
  const m: CampaignMember = {
    job_id: r.job_id,
    created_at: iso(r.created_at),
    joined_at: iso(r.joined_at),
    matched: r.matched,
    status: r.status,
    recipients,
  };
  if (r.subject !== null) m.subject = r.subject;
  if (r.sender !== null) m.sender = r.sender;
  if (r.reporter !== null) m.reporter = r.reporter;
  const phish = typeof r.is_phishing === 'string' ? JSON.parse(r.is_phishing) : r.is_phishing;
  if (typeof phish === 'boolean') m.is_phishing = phish;
  if (r.threat_level !== null) m.threat_level = r.threat_level as CampaignMember['threat_level'];
  if (r.recommended_action !== null) {
    m.recommended_action = r.recommended_action as CampaignMember['recommended_action'];
  }
  const conf = typeof r.confidence === 'string' ? Number(r.confidence) : r.confidence;
  if (typeof conf === 'number' && Number.isFinite(conf)) m.confidence = conf;
  return m;
}

/** Lure keys remembered as having matched lately (bounded: the oldest forgotten first). */
const RECENT_KEYS = 4096;

/** A bounded set of keys, the least recently added forgotten first. */
function recentKeys(max: number): { add(key: string): void; has(key: string): boolean } {
  const keys = new Set<string>();
  return {
    add(key) {
      keys.delete(key);
      keys.add(key);
      if (keys.size > max) keys.delete(keys.values().next().value as string);
    },
    has: (key) => keys.has(key),
  };
}

/** Moves the members, recipients, reporters and search terms of `others` into `target`. */
async function mergeInto(tx: SqlClient, target: string, others: string[]): Promise<void> {
  // the moved members' search terms first (only theirs: a merge costs what it moves)
  await tx.query(
    `INSERT INTO job_terms (kind, value, created_at, job_id)
     SELECT 'camp', ($1::uuid)::text, j.created_at, j.job_id
     FROM campaign_members m JOIN jobs j ON j.job_id = m.job_id WHERE m.campaign_id = ANY($2::uuid[])
     ON CONFLICT DO NOTHING`,
    [target, others],
  );
  await tx.query(`DELETE FROM job_terms WHERE kind = 'camp' AND value = ANY($1::text[])`, [others]);
  await tx.query(
    'UPDATE campaign_members SET campaign_id = $1 WHERE campaign_id = ANY($2::uuid[])',
    [target, others],
  );
  for (const table of ['campaign_recipients', 'campaign_reporters']) {
    await tx.query(
      `INSERT INTO ${table} (campaign_id, address)
       SELECT $1, address FROM ${table} WHERE campaign_id = ANY($2::uuid[]) ON CONFLICT DO NOTHING`,
      [target, others],
    );
  }
  await tx.query(
    `UPDATE campaigns c SET
       created_at = LEAST(c.created_at, (SELECT min(o.created_at) FROM campaigns o WHERE o.id = ANY($2::uuid[]))),
       lures = (SELECT COALESCE(jsonb_agg(DISTINCT x ORDER BY x), '[]'::jsonb) FROM (
         SELECT jsonb_array_elements_text(o.lures) AS x FROM campaigns o
         WHERE o.id = ANY($2::uuid[]) OR o.id = $1::uuid) s),
       size = (SELECT count(*) FROM campaign_members WHERE campaign_id = $1::uuid),
       recipients = (SELECT count(*) FROM campaign_recipients WHERE campaign_id = $1::uuid),
       reporters = (SELECT count(*) FROM campaign_reporters WHERE campaign_id = $1::uuid)
     WHERE c.id = $1::uuid`,
    [target, others],
  );
  await tx.query('DELETE FROM campaigns WHERE id = ANY($1::uuid[])', [others]);
}
