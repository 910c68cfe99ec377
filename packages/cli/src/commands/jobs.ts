import type { Ctx } from '../context.ts';
import { usageError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { formatJob, formatJobList, type JobView } from '../output.ts';

const STATUSES = ['queued', 'processing', 'completed', 'failed'];

export async function jobs(
  ctx: Ctx,
  o: { status: string | undefined; limit: number; cursor: string | undefined },
): Promise<number> {
  if (o.status && !STATUSES.includes(o.status))
    throw usageError(`--status must be one of ${STATUSES.join(', ')}`);
  if (!Number.isInteger(o.limit) || o.limit < 1 || o.limit > 200)
    throw usageError('--limit must be an integer from 1 to 200');
  const page = await ctx
    .api()
    .request<{ items: JobView[]; next_cursor: string | null }>('GET', '/api/v1/analyze', {
      query: { status: o.status, limit: o.limit, cursor: o.cursor },
    });
  if (ctx.json) {
    ctx.printJson(page);
    return EXIT.ok;
  }
  ctx.print(formatJobList(page.items));
  if (page.next_cursor)
    ctx.note(`more: trawl jobs --limit ${o.limit} --cursor ${page.next_cursor}`);
  return EXIT.ok;
}

export async function job(ctx: Ctx, id: string): Promise<number> {
  const j = await ctx.api().request<JobView>('GET', `/api/v1/analyze/${encodeURIComponent(id)}`);
  if (ctx.json) ctx.printJson(j);
  else ctx.print(formatJob(j, { color: !!ctx.io.stdout.isTTY, indicators: 10 }));
  return EXIT.ok;
}
