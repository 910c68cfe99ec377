import { useState } from 'preact/hooks';
import { api, can } from '../api.ts';
import { Link } from '../router.tsx';
import type { Job } from '../types.ts';
import { Card, Problem, time, useLoad } from './ui.tsx';

// The job page's analyst feedback form and the campaign the job belongs to.

export function Feedback(props: { job: Job; onDone: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const [note, setNote] = useState('');
  const [sent, setSent] = useState('');
  const fb = props.job.feedback;
  const give = (verdict: 'phishing' | 'legitimate') => {
    setError(null);
    api(`/api/v1/analyze/${props.job.job_id}/feedback`, {
      method: 'POST',
      json: note ? { verdict, note } : { verdict },
    })
      .then(() => {
        setSent(`Thank you: recorded as ${verdict}.`);
        props.onDone();
      })
      .catch((e: unknown) => setError(e));
  };
  return (
    <Card title="Feedback">
      {fb ? (
        <p>
          Marked <strong>{fb.verdict}</strong> by {fb.by} on {time(fb.at)}
          {fb.note ? `: ${fb.note}` : ''}.
        </p>
      ) : (
        <p class="muted">No feedback yet.</p>
      )}
      {can('analyst') && props.job.status === 'completed' ? (
        <div class="feedback">
          <div class="field">
            <label for="fb-note">Note (optional)</label>
            <input
              id="fb-note"
              value={note}
              onInput={(e) => setNote((e.currentTarget as HTMLInputElement).value)}
            />
          </div>
          <button type="button" class="danger" onClick={() => give('phishing')}>
            It is phishing
          </button>
          <button type="button" class="secondary" onClick={() => give('legitimate')}>
            It is legitimate
          </button>
        </div>
      ) : null}
      <p role="status">{sent}</p>
      {error ? <Problem error={error} what="Feedback" /> : null}
    </Card>
  );
}

interface CampaignMember {
  job_id: string;
  recipients: string[];
  reporter?: string;
  is_phishing?: boolean;
}

/** The job's campaign (GET /api/v1/campaigns/{id}): its size, and the other recipients. */
export function Campaign(props: { job: Job }) {
  const c = props.job.campaign;
  const detail = useLoad(
    () =>
      c
        ? api<{ members: CampaignMember[] }>(
            `/api/v1/campaigns/${encodeURIComponent(c.id)}?limit=200`,
          )
        : Promise.resolve({ members: [] as CampaignMember[] }),
    [c?.id],
  );
  if (!c) {
    return (
      <p>
        This message is not part of a campaign: no other suspicious or reported message shares its
        lure.
      </p>
    );
  }
  const others = new Set<string>();
  const reporters = new Set<string>();
  for (const m of detail.data?.members ?? []) {
    if (m.reporter) reporters.add(m.reporter);
    if (m.job_id === props.job.job_id) continue;
    for (const r of m.recipients) others.add(r);
  }
  return (
    <>
      <p>
        Campaign <code>{c.id.slice(0, 12)}</code>: {c.size} messages to {c.recipients} recipients
        {c.reporters ? `, reported by ${c.reporters}` : ''}.
      </p>
      {detail.error ? <Problem error={detail.error} what="The campaign" /> : null}
      {reporters.size ? <p>Reported by: {[...reporters].join(', ')}</p> : null}
      <p>Other recipients:</p>
      {others.size === 0 ? (
        <p class="muted">{detail.loading ? 'Loading…' : 'None.'}</p>
      ) : (
        <ul class="inline-list">
          {[...others].map((r) => (
            <li key={r}>
              <Link href={`/jobs?recipient=${encodeURIComponent(r)}`}>{r}</Link>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
