import { api } from '../api.ts';
import { THead } from '../components/table.tsx';
import { Loading, Page, Problem, time, useLoad } from '../components/ui.tsx';
import { Link, useLocation } from '../router.tsx';

interface AuditRecord {
  id: string;
  at: string;
  actor: string | null;
  action: string;
  target: string | null;
  outcome: string;
  address: string | null;
  details?: Record<string, unknown>;
}

export function AuditPage() {
  const loc = useLocation();
  const q = new URLSearchParams();
  for (const k of ['action', 'actor', 'cursor']) {
    const v = loc.query.get(k);
    if (v) q.set(k, v);
  }
  const qs = q.toString();
  const log = useLoad(
    () => api<{ items: AuditRecord[]; next_cursor: string | null }>(`/api/v1/audit?${qs}`),
    [qs],
  );
  return (
    <Page title="Audit log">
      {log.error ? <Problem error={log.error} /> : null}
      {log.data ? (
        <table class="audit">
          <caption class="sr-only">Audit log, newest first</caption>
          <THead cols={['When', 'Actor', 'Action', 'Target', 'Outcome', 'Address']} />
          <tbody>
            {log.data.items.map((r) => (
              <tr key={r.id}>
                <td>{time(r.at)}</td>
                <td>{r.actor ?? '—'}</td>
                <td>
                  <code>{r.action}</code>
                </td>
                <td>{r.target ?? ''}</td>
                <td>{r.outcome}</td>
                <td>{r.address ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <Loading />
      )}
      {log.data?.next_cursor ? (
        <Link href={`/audit?cursor=${encodeURIComponent(log.data.next_cursor)}`}>
          Older entries
        </Link>
      ) : null}
    </Page>
  );
}
