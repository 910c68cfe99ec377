import type { QuarantineRecord } from '@trawl/contracts';
import type { Ctx } from '../context.ts';
import { EXIT } from '../exit-codes.ts';
import { printList, table } from '../table.ts';

/** `trawl quarantine list [--job ID]`: messages the SMTP filter quarantined, newest first. */
export async function quarantineList(ctx: Ctx, o: { job: string | undefined }): Promise<number> {
  const q = o.job ? `?job_id=${encodeURIComponent(o.job)}` : '';
  return printList(
    ctx,
    `/api/v1/quarantine${q}`,
    'nothing quarantined',
    (items: QuarantineRecord[]) =>
      table(
        ['ID', 'STATE', 'QUARANTINED', 'FROM', 'SUBJECT'],
        items.map((m) => [
          m.id,
          m.state === 'released' ? `released by ${m.released_by ?? '?'}` : m.state,
          m.quarantined_at,
          m.envelope_from || '<>',
          m.subject,
        ]),
        [36, 24, 24, 30],
      ),
  );
}

/**
 * `trawl quarantine release <id>` (analyst): the filter that holds it delivers the original to its
 * recipients, once; a second release is refused (409, exit 1), and the audit log records who.
 */
export async function quarantineRelease(ctx: Ctx, id: string): Promise<number> {
  const r = await ctx
    .api()
    .request<QuarantineRecord>('POST', `/api/v1/quarantine/${encodeURIComponent(id)}/release`);
  if (ctx.json) ctx.printJson(r);
  else
    ctx.print(
      `${r.id}: released by ${r.released_by} at ${r.released_at} to ${r.recipients.join(', ')}`,
    );
  return EXIT.ok;
}
