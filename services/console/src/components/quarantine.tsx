import { useState } from 'preact/hooks';
import { api, can } from '../api.ts';
import { Card, Problem, time, useLoad } from './ui.tsx';

interface QuarantineRecord {
  id: string;
  recipients: string[];
  envelope_from: string;
  state: 'held' | 'releasing' | 'released';
  quarantined_at: string;
  released_at: string | null;
  released_by: string | null;
}

/**
 * The messages of a job the SMTP filter quarantined (GET /api/v1/quarantine?job_id=), each with a
 * Release button for analysts: the filter delivers the original to its recipients once (issue 32).
 * Renders nothing for a job that was never quarantined.
 */
export function Quarantine(props: { jobId: string }) {
  const list = useLoad(
    () => api<{ items: QuarantineRecord[] }>(`/api/v1/quarantine?job_id=${props.jobId}`),
    [props.jobId],
  );
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState('');
  const items = list.data?.items ?? [];
  if (items.length === 0) return null;
  const release = (id: string) => {
    setError(null);
    setBusy(id);
    api(`/api/v1/quarantine/${id}/release`, { method: 'POST' })
      .then(() => list.reload())
      .catch((e: unknown) => setError(e))
      .finally(() => setBusy(''));
  };
  return (
    <Card title="Quarantine">
      {items.map((m) => (
        <div key={m.id} class="quarantine">
          {m.state === 'released' ? (
            <p role="status">
              Released by <strong>{m.released_by}</strong> on {time(m.released_at ?? '')} to{' '}
              {m.recipients.join(', ')}.
            </p>
          ) : (
            <p>
              Held since {time(m.quarantined_at)}, for {m.recipients.join(', ')}
              {m.state === 'releasing' ? ' (release in progress)' : ''}.
            </p>
          )}
          {m.state === 'held' && can('analyst') ? (
            <button type="button" disabled={busy === m.id} onClick={() => release(m.id)}>
              Release to its recipients
            </button>
          ) : null}
        </div>
      ))}
      {error ? <Problem error={error} what="Release" /> : null}
    </Card>
  );
}
