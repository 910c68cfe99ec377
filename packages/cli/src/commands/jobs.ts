import type { Ctx } from '../context.ts';
import { usageError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { formatJob, formatJobList, type JobView } from '../output.ts';

const STATUSES = ['queued', 'processing', 'completed', 'failed'];

/** `trawl jobs` filter flags → GET /api/v1/analyze query parameters (the server validates them). */
const FILTER_PARAMS = {
  threat: 'threat_level',
  action: 'action',
  sender: 'sender',
  recipient: 'recipient',
  subject: 'subject',
  'url-domain': 'url_domain',
  sha256: 'sha256',
  indicator: 'indicator',
  workflow: 'workflow',
  submitter: 'submitter',
  since: 'since',
  until: 'until',
  'email-id': 'email_id',
  campaign: 'campaign',
  reporter: 'reporter',
  feedback: 'feedback',
} as const;
export const JOB_FILTER_FLAGS = Object.keys(FILTER_PARAMS) as (keyof typeof FILTER_PARAMS)[];

/** A shell word: as it is when it is safe, else single-quoted. */
function shellWord(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export async function jobs(
  ctx: Ctx,
  o: {
    status: string | undefined;
    limit: number;
    cursor: string | undefined;
    filters?: Partial<Record<(typeof JOB_FILTER_FLAGS)[number], string>>;
    phishing?: boolean | undefined;
  },
): Promise<number> {
  if (o.status && !STATUSES.includes(o.status))
    throw usageError(`--status must be one of ${STATUSES.join(', ')}`);
  if (!Number.isInteger(o.limit) || o.limit < 1 || o.limit > 200)
    throw usageError('--limit must be an integer from 1 to 200');
  const query: Record<string, string | number | undefined> = {
    status: o.status,
    limit: o.limit,
    cursor: o.cursor,
  };
  if (o.phishing !== undefined) query.is_phishing = String(o.phishing);
  const flags: string[] = [];
  if (o.status) flags.push('--status', o.status);
  if (o.phishing !== undefined) flags.push(o.phishing ? '--phishing' : '--clean');
  for (const f of JOB_FILTER_FLAGS) {
    const v = o.filters?.[f];
    if (v === undefined) continue;
    query[FILTER_PARAMS[f]] = v;
    flags.push(`--${f}`, shellWord(v));
  }
  const page = await ctx
    .api()
    .request<{ items: JobView[]; next_cursor: string | null }>('GET', '/api/v1/analyze', {
      query,
    });
  if (ctx.json) {
    ctx.printJson(page);
    return EXIT.ok;
  }
  ctx.print(formatJobList(page.items));
  // the next page's command keeps every filter
  if (page.next_cursor)
    ctx.note(
      `more: trawl jobs ${[...flags, '--limit', String(o.limit), '--cursor', page.next_cursor].join(' ')}`,
    );
  return EXIT.ok;
}

export async function job(ctx: Ctx, id: string): Promise<number> {
  const j = await ctx.api().request<JobView>('GET', `/api/v1/analyze/${encodeURIComponent(id)}`);
  if (ctx.json) ctx.printJson(j);
  else ctx.print(formatJob(j, { color: !!ctx.io.stdout.isTTY, indicators: 10, evidence: true }));
  return EXIT.ok;
}
