import type { Ctx } from '../context.ts';
import { usageError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { printList, table } from '../table.ts';

interface WebhookView {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  description: string | null;
}

interface AttemptView {
  at: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  delivery_status: string;
}

/** `trawl webhooks list`: the registered endpoints (admin). */
export async function webhooksList(ctx: Ctx): Promise<number> {
  return printList(ctx, '/api/v1/webhooks', 'no webhooks', (items: WebhookView[]) =>
    table(
      ['ID', 'STATE', 'EVENTS', 'URL'],
      items.map((w) => [
        w.id,
        w.enabled ? 'enabled' : `disabled${w.disabled_reason ? ` (${w.disabled_reason})` : ''}`,
        w.events.join(','),
        w.url,
      ]),
      [36, 10, 40],
    ),
  );
}

/** `trawl webhooks add <url> --event E [--event E…] [--description D]`: shows the secret once. */
export async function webhooksAdd(
  ctx: Ctx,
  o: { url: string; events: string[]; description: string | undefined },
): Promise<number> {
  if (o.events.length === 0)
    throw usageError(
      '--event is required (job.completed, job.failed, verdict.phishing, feedback.created, campaign.updated)',
    );
  const w = await ctx.api().request<WebhookView & { secret: string }>('POST', '/api/v1/webhooks', {
    json: {
      url: o.url,
      events: o.events,
      ...(o.description !== undefined ? { description: o.description } : {}),
    },
  });
  if (ctx.json) ctx.printJson(w);
  else {
    ctx.print(`created webhook ${w.id} → ${w.url} (${w.events.join(', ')})`);
    ctx.print(`secret: ${w.secret}   (shown once: verify the webhook-signature header with it)`);
  }
  return EXIT.ok;
}

/** `trawl webhooks rm <id>`. */
export async function webhooksRemove(ctx: Ctx, id: string): Promise<number> {
  await ctx.api().request('DELETE', `/api/v1/webhooks/${encodeURIComponent(id)}`);
  if (ctx.json) ctx.printJson({ id, removed: true });
  else ctx.print(`removed webhook ${id}`);
  return EXIT.ok;
}

/** `trawl webhooks deliveries <id> [--limit N] [--cursor C]`: the delivery log, newest first. */
export async function webhooksDeliveries(
  ctx: Ctx,
  o: { id: string; limit: string | undefined; cursor: string | undefined },
): Promise<number> {
  const limit = Number(o.limit ?? 20);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200)
    throw usageError('--limit must be an integer from 1 to 200');
  const r = await ctx
    .api()
    .request<{ items: AttemptView[]; next_cursor: string | null }>(
      'GET',
      `/api/v1/webhooks/${encodeURIComponent(o.id)}/deliveries`,
      { query: { limit, cursor: o.cursor } },
    );
  if (ctx.json) {
    ctx.printJson(r);
    return EXIT.ok;
  }
  if (r.items.length === 0) ctx.print('no deliveries');
  else
    ctx.print(
      table(
        ['AT', 'EVENT', 'TYPE', '#', 'RESULT', 'DELIVERY'],
        r.items.map((a) => [
          a.at,
          a.event_id,
          a.event_type,
          String(a.attempt),
          a.status_code !== null && a.status_code < 300
            ? String(a.status_code)
            : (a.error ?? String(a.status_code)).slice(0, 40),
          a.delivery_status,
        ]),
        [24, 36, 16, 3, 40],
      ),
    );
  if (r.next_cursor) ctx.print(`more: trawl webhooks deliveries ${o.id} --cursor ${r.next_cursor}`);
  return EXIT.ok;
}
