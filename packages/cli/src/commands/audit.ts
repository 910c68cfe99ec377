import type { AuditVerification } from '@trawl/contracts';
import type { Ctx } from '../context.ts';
import { CLI_ERRORS, CliError, usageError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { table } from '../table.ts';

interface AuditRecordView {
  id: string;
  at: string;
  actor: string | null;
  action: string;
  target: string | null;
  outcome: 'success' | 'failure';
  address: string | null;
}

interface AuditPage {
  items: AuditRecordView[];
  next_cursor: string | null;
}

/** The audit table, newest first, with a header row. */
function formatAudit(items: readonly AuditRecordView[]): string {
  const rows = items.map((r) => [
    r.at,
    r.actor ?? '-',
    r.action,
    r.target ?? '-',
    r.outcome,
    r.address ?? '-',
  ]);
  return table(
    ['AT', 'ACTOR', 'ACTION', 'TARGET', 'OUTCOME', 'ADDRESS'],
    rows,
    [24, 16, 22, 24, 7],
  );
}

/**
 * `trawl audit`: the audit log, newest first (GET /api/v1/audit, admin), or with `--verify` a walk
 * of its hash chain (GET /api/v1/audit/verify): exit 1 when the chain is broken.
 */
export async function audit(
  ctx: Ctx,
  o: {
    limit: string | undefined;
    cursor: string | undefined;
    action: string | undefined;
    actor: string | undefined;
    verify: boolean;
  },
): Promise<number> {
  const api = ctx.api();
  if (o.verify) {
    const v = await api.request<AuditVerification>('GET', '/api/v1/audit/verify');
    if (ctx.json) {
      ctx.printJson(v);
      return v.ok ? EXIT.ok : EXIT.error;
    }
    if (v.ok) {
      ctx.print(
        `audit chain ok: ${v.checked} record(s) checked${v.unchained > 0 ? `, ${v.unchained} older record(s) outside the chain` : ''}\nhead ${v.head.id} ${v.head.hash}   (record it elsewhere to detect a rewrite later)`,
      );
    }
    if (!v.ok) {
      throw new CliError(
        CLI_ERRORS.auditBroken,
        `audit chain broken at record ${v.broken?.id ?? '?'}: ${v.broken?.reason ?? 'unknown reason'} (${v.checked} record(s) checked)`,
        EXIT.error,
      );
    }
    return EXIT.ok;
  }
  const limit = Number(o.limit ?? 50);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200)
    throw usageError('--limit must be a whole number from 1 to 200');
  const page = await api.request<AuditPage>('GET', '/api/v1/audit', {
    query: { limit: String(limit), cursor: o.cursor, action: o.action, actor: o.actor },
  });
  if (ctx.json) ctx.printJson(page);
  else {
    ctx.print(page.items.length === 0 ? 'no audit records' : formatAudit(page.items));
    if (page.next_cursor) {
      const keep = [
        o.action ? ` --action ${o.action}` : '',
        o.actor ? ` --actor ${o.actor}` : '',
        o.limit ? ` --limit ${limit}` : '',
      ].join('');
      ctx.note(`more: trawl audit${keep} --cursor ${page.next_cursor}`);
    }
  }
  return EXIT.ok;
}
