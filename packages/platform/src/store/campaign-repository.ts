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
import { iso } from './rows.ts';
import type { SqlClient } from './types.ts';

/**
 * Campaigns (issue 16, migration 008). `assign` is called once per suspicious finished job with its
 * lure keys (computed by the orchestrator, services/analyzer-orchestrator/src/campaigns.ts):
 * `dom:<registrable domain>`, `url:<url>`, `sha:<sha256>`, `txt<band>:<hex>` (a band of a MinHash
 * signature of the text; the whole signature rides along to confirm a band match by similarity).
 */
export interface LureInput {
  job_id: string;
  keys: string[];
  /** The MinHash signature of the job's text (MINHASH_SIZE values, 8 hex digits each). */
  signature?: string | undefined;
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
/** Earlier jobs read per lure key: any one of them tells the campaign (they are all in it). */
const PER_KEY = 16;
/**
 * Jobs read per text band. A band is 4 values of 32 bits: texts that are not alike share one by
 * chance about never, so these are candidates worth confirming by the whole signature.
 */
const PER_BAND = 64;
/** Values of a text's MinHash signature (each 8 hex digits); bands of MINHASH_BAND_ROWS values. */
export const MINHASH_SIZE = 32;
export const MINHASH_BAND_ROWS = 4;
/**
 * Least share of equal signature values (an estimate of the Jaccard similarity of the two texts'
 * word pairs) for two texts to be near-identical.
 */
export const MIN_TEXT_SIMILARITY = 0.6;
const SIGNATURE_RE = new RegExp(`^[0-9a-f]{${MINHASH_SIZE * 8}}$`);

/** Share of equal values of two signatures (0 when either is malformed). */
export function signatureSimilarity(a: string, b: string): number {
  if (!SIGNATURE_RE.test(a) || !SIGNATURE_RE.test(b)) return 0;
  let same = 0;
  for (let i = 0; i < MINHASH_SIZE; i++) {
    if (a.slice(i * 8, i * 8 + 8) === b.slice(i * 8, i * 8 + 8)) same++;
  }
  return same / MINHASH_SIZE;
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
/** Records the keys and answers the earlier jobs holding one of them, with their campaign. */
const MATCH_SQL = `WITH k AS (
    SELECT * FROM unnest($1::text[], $2::text[]) AS k(key, signature)
  ), async AS (
    SELECT set_config('synchronous_commit', 'off', true) AS v
  ), ins AS (
    INSERT INTO lure_keys (key, job_id, signature) SELECT key, $3::uuid, signature FROM k, async
    ON CONFLICT DO NOTHING
  )
  SELECT l.key, l.job_id::text AS job_id, l.signature, m.campaign_id::text AS campaign_id,
    (SELECT c.created_at FROM campaigns c WHERE c.id = m.campaign_id) AS campaign_created
  FROM k CROSS JOIN LATERAL (
    SELECT x.key, x.job_id, x.signature FROM lure_keys x
    WHERE x.key = k.key AND x.job_id <> $3::uuid
    LIMIT CASE WHEN k.signature IS NULL THEN ${PER_KEY} ELSE ${PER_BAND} END
  ) l
  LEFT JOIN campaign_members m ON m.job_id = l.job_id`;

/** Recipients of a job as its evidence shows them (To, Cc, Bcc), lower-cased, each once. */
const RECIPIENTS_OF = (j: string) => `COALESCE((SELECT jsonb_agg(DISTINCT lower(a))
    FROM jsonb_array_elements_text(
      COALESCE(${j}.result->'evidence'->'message'->'to', '[]'::jsonb)
      || COALESCE(${j}.result->'evidence'->'message'->'cc', '[]'::jsonb)
      || COALESCE(${j}.result->'evidence'->'message'->'bcc', '[]'::jsonb)) a), '[]'::jsonb)`;

/**
 * Adds members (the jobs of $2 with the lure each matched, $3) to campaign $1: their recipients,
 * reporters and search terms (`camp:<id>`), and moves the campaign's counts on by what they added.
 */
const ADD_MEMBERS_SQL = `WITH n AS (
    SELECT * FROM unnest($2::uuid[], $3::text[]) AS n(job_id, matched)
  ), added AS (
    INSERT INTO campaign_members (job_id, campaign_id, matched, recipients, reporter)
    SELECT j.job_id, $1::uuid, n.matched, ${RECIPIENTS_OF('j')},
      left(j.origin->'report'->>'reporter', 320)
    FROM n JOIN jobs j ON j.job_id = n.job_id
    ON CONFLICT (job_id) DO NOTHING
    RETURNING job_id, recipients, reporter
  ), terms AS (
    INSERT INTO job_terms (kind, value, created_at, job_id)
    SELECT 'camp', ($1::uuid)::text, j.created_at, j.job_id FROM added a JOIN jobs j USING (job_id)
    ON CONFLICT DO NOTHING
  ), rcpt AS (
    INSERT INTO campaign_recipients (campaign_id, address)
    SELECT DISTINCT $1::uuid, r FROM added a, jsonb_array_elements_text(a.recipients) r
    ON CONFLICT DO NOTHING RETURNING 1
  ), rep AS (
    INSERT INTO campaign_reporters (campaign_id, address)
    SELECT DISTINCT $1::uuid, lower(a.reporter) FROM added a WHERE a.reporter IS NOT NULL
    ON CONFLICT DO NOTHING RETURNING 1
  )
  UPDATE campaigns c SET
    size = c.size + (SELECT count(*) FROM added),
    recipients = c.recipients + (SELECT count(*) FROM rcpt),
    reporters = c.reporters + (SELECT count(*) FROM rep),
    last_seen_at = now(),
    lures = (SELECT COALESCE(jsonb_agg(DISTINCT x ORDER BY x), '[]'::jsonb) FROM (
      SELECT jsonb_array_elements_text(c.lures) AS x UNION SELECT unnest($4::text[])) s),
    subject = CASE WHEN c.subject <> '' THEN c.subject ELSE COALESCE((
      SELECT left(j.result->'evidence'->'message'->>'subject', 300)
      FROM added a JOIN jobs j USING (job_id) ORDER BY j.created_at LIMIT 1), '') END
  WHERE c.id = $1::uuid
  RETURNING c.id::text AS id, c.size, c.recipients, c.reporters,
    ARRAY(SELECT job_id::text FROM added) AS joined`;

interface MatchRow {
  key: string;
  job_id: string;
  signature: string | null;
  campaign_id: string | null;
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

export function createCampaignRepository(sql: SqlClient): CampaignRepository {
  return {
    async assign(input) {
      const sig = input.signature;
      const sigOk = sig !== undefined && SIGNATURE_RE.test(sig);
      // a text key without a well-formed signature to confirm it by is dropped
      const keys = [...new Set(input.keys)].filter((k) => sigOk || !k.startsWith('txt'));
      if (keys.length === 0) return null;
      const signatures = keys.map((k) => (k.startsWith('txt') ? (sig ?? null) : null));
      const params = [keys, signatures, input.job_id];
      /** The earlier jobs that share a lure (a text band only when the whole texts are alike). */
      const matchesOf = (rows: MatchRow[]) =>
        rows.filter(
          (m) =>
            !m.key.startsWith('txt') ||
            (sig !== undefined &&
              m.signature !== null &&
              signatureSimilarity(sig, m.signature) >= MIN_TEXT_SIMILARITY),
        );
      // Fast path, no lock: most jobs share no lure. The keys are stored and looked up in one
      // statement, then looked up again in a later snapshot: of two jobs stored at the same time
      // with a key in common, the one whose second look comes last sees the other.
      for (let look = 0; look < 2; look++) {
        const r = await sql.query<MatchRow>(MATCH_SQL, params, 'campaign_match');
        if (matchesOf(r.rows).length > 0) break;
        if (look === 1) return null;
      }
      return sql.transaction(async (tx) => {
        await tx.query(
          `SELECT pg_advisory_xact_lock($1), set_config('synchronous_commit', 'off', true)`,
          [CAMPAIGN_LOCK_KEY],
          'campaign_lock',
        );
        const found = await tx.query<MatchRow>(MATCH_SQL, params, 'campaign_match');
        const lone = new Map<string, string>();
        const campaigns = new Map<string, number>();
        const matched: string[] = [];
        for (const m of matchesOf(found.rows)) {
          matched.push(m.key);
          if (m.campaign_id) campaigns.set(m.campaign_id, Date.parse(iso(m.campaign_created)));
          else if (!lone.has(m.job_id)) lone.set(m.job_id, m.key);
        }
        if (matched.length === 0) return null;
        const byAge = [...campaigns.entries()].sort(
          (a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1),
        );
        let target = byAge[0]?.[0];
        const created = target === undefined;
        if (target === undefined) {
          target = randomUUID();
          await tx.query('INSERT INTO campaigns (id) VALUES ($1)', [target], 'campaign_create');
        }
        const others = byAge.slice(1).map(([id]) => id);
        if (others.length > 0) await mergeInto(tx, target, others);
        const first = matched[0] as string;
        const jobs = [input.job_id, ...lone.keys()];
        const why = [first, ...lone.values()].map(publicLure);
        const kinds = [...new Set(matched.map(lureKindOf))];
        const r = await tx.query<{
          id: string;
          size: number;
          recipients: number;
          reporters: number;
          joined: string[];
        }>(ADD_MEMBERS_SQL, [target, jobs, why, kinds], 'campaign_add_members');
        const row = r.rows[0];
        if (!row) return null;
        if (created && Number(row.size) < 2) {
          // the earlier jobs it matched are gone (deleted by retention): no campaign of one
          await tx.query(`DELETE FROM job_terms WHERE kind = 'camp' AND value = $1`, [target]);
          await tx.query('DELETE FROM campaigns WHERE id = $1', [target]);
          return null;
        }
        return {
          campaign: {
            id: row.id,
            size: Number(row.size),
            recipients: Number(row.recipients),
            reporters: Number(row.reporters),
          },
          joined: row.joined,
          merged: others,
          created,
        };
      });
    },

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
           j.result->'evidence'->'message'->>'subject' AS subject,
           j.result->'evidence'->'message'->'from'->>'address' AS sender,
           j.result->'is_phishing' AS is_phishing, j.result->>'threat_level' AS threat_level,
           j.result->>'recommended_action' AS recommended_action,
           j.result->'confidence' AS confidence, ${ts('m.joined_at')} AS cursor_ts
         FROM campaign_members m JOIN jobs j ON j.job_id = m.job_id
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
