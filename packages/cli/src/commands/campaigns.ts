import type { Campaign, CampaignDetail, CampaignList } from '@trawl/contracts';
import type { Ctx } from '../context.ts';
import { usageError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { table } from '../table.ts';

const short = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The campaigns table, newest activity first. */
function formatCampaigns(items: readonly Campaign[]): string {
  return table(
    ['CAMPAIGN', 'LAST SEEN', 'MSGS', 'RCPTS', 'REPORTERS', 'LURES', 'SUBJECT'],
    items.map((c) => [
      c.id,
      c.last_seen.slice(0, 19).replace('T', ' '),
      String(c.size),
      String(c.recipients),
      String(c.reporters),
      c.lures.join(',') || '-',
      short(c.subject, 60),
    ]),
    [36, 19, 5, 6, 9, 22],
  );
}

/** One campaign: its counts, then its members with their recipients and verdicts. */
function formatCampaign(c: CampaignDetail): string {
  const head = [
    `campaign   ${c.id}`,
    `subject    ${c.subject}`,
    `reached    ${c.size} message(s), ${c.recipients} recipient(s), ${c.reporters} reporter(s)`,
    `lures      ${c.lures.join(', ') || '-'}`,
    `seen       ${c.first_seen} … ${c.last_seen}`,
    '',
  ];
  const rows = c.members.map((m) => [
    m.job_id,
    m.is_phishing === undefined
      ? m.status
      : `${m.is_phishing ? 'phishing' : 'clean'} ${m.threat_level ?? ''}`.trim(),
    short(m.sender ?? '-', 32),
    short(m.recipients.join(', ') || '-', 48) + (m.reporter ? ` (reported by ${m.reporter})` : ''),
    short(m.matched, 48),
  ]);
  return `${head.join('\n')}${table(['JOB', 'VERDICT', 'SENDER', 'RECIPIENTS', 'MATCHED'], rows, [36, 16, 32, 48])}`;
}

/**
 * `trawl campaigns [<id>]`: the campaigns, newest activity first (GET /api/v1/campaigns), or one
 * campaign with its members, their recipients and verdicts (GET /api/v1/campaigns/{id}).
 */
export async function campaigns(
  ctx: Ctx,
  o: { id: string | undefined; limit: string | undefined; cursor: string | undefined },
): Promise<number> {
  const limit = Number(o.limit ?? 20);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200)
    throw usageError('--limit must be a whole number from 1 to 200');
  const api = ctx.api();
  const query = { limit: String(limit), cursor: o.cursor };
  if (o.id === undefined) {
    const page = await api.request<CampaignList>('GET', '/api/v1/campaigns', { query });
    if (ctx.json) ctx.printJson(page);
    else {
      ctx.print(page.items.length === 0 ? 'no campaigns' : formatCampaigns(page.items));
      if (page.next_cursor) ctx.note(`more: trawl campaigns --cursor ${page.next_cursor}`);
    }
    return EXIT.ok;
  }
  const c = await api.request<CampaignDetail>(
    'GET',
    `/api/v1/campaigns/${encodeURIComponent(o.id)}`,
    { query },
  );
  if (ctx.json) ctx.printJson(c);
  else {
    ctx.print(formatCampaign(c));
    if (c.next_cursor) ctx.note(`more: trawl campaigns ${c.id} --cursor ${c.next_cursor}`);
    ctx.note(`its jobs: trawl jobs --campaign ${c.id}`);
  }
  return EXIT.ok;
}
