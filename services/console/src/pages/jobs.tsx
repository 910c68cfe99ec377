import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { THead } from '../components/table.tsx';
import { Loading, Page, Problem, Threat, time, useLoad, Verdict } from '../components/ui.tsx';
import { onJobEvent } from '../events.ts';
import { Link, navigate, useLocation } from '../router.tsx';
import type { Job, JobList } from '../types.ts';

/** The text filters of GET /api/v1/analyze, by their name in the page's URL: label and hint. */
const TEXT_FILTERS: Record<string, { label: string; hint: string }> = {
  sender: { label: 'Sender', hint: 'address or domain' },
  recipient: { label: 'Recipient', hint: 'address or domain' },
  subject: { label: 'Subject words', hint: 'every word must appear' },
  url_domain: { label: 'URL domain', hint: 'host or registrable domain' },
  sha256: { label: 'Attachment SHA-256', hint: '64 hex digits' },
  indicator: { label: 'Indicator type', hint: 'e.g. url_shortener' },
  workflow: { label: 'Workflow', hint: 'workflow id' },
  submitter: { label: 'Submitted by', hint: 'username' },
  reporter: { label: 'Reported by', hint: "the reporter's address" },
  campaign: { label: 'Campaign', hint: 'campaign id' },
  email_id: { label: 'Email id', hint: "the message's id" },
  since: { label: 'Since', hint: '2026-11-01 or a timestamp' },
  until: { label: 'Until', hint: '2026-11-02 or a timestamp' },
};
const CHOICES: { name: string; label: string; options: string[] }[] = [
  { name: 'status', label: 'Status', options: ['queued', 'processing', 'completed', 'failed'] },
  { name: 'is_phishing', label: 'Verdict', options: ['true', 'false'] },
  {
    name: 'threat_level',
    label: 'Threat level',
    options: ['none', 'low', 'medium', 'high', 'critical'],
  },
  { name: 'action', label: 'Action', options: ['allow', 'flag', 'review', 'quarantine'] },
  {
    name: 'feedback',
    label: 'Analyst feedback',
    options: ['phishing', 'legitimate', 'none', 'disagrees'],
  },
];
const KNOWN = new Set([...Object.keys(TEXT_FILTERS), ...CHOICES.map((c) => c.name), 'cursor']);

function choiceLabel(name: string, v: string): string {
  if (name === 'is_phishing') return v === 'true' ? 'phishing' : 'legitimate';
  if (name === 'feedback' && v === 'disagrees') return 'differs from the verdict';
  return v;
}

/** `a@x, b@x, c@x +4`: the first recipients and how many more. */
function recipientsText(j: Job): string {
  const shown = j.recipients ?? [];
  if (shown.length === 0) return '—';
  const more = (j.recipient_count ?? shown.length) - shown.length;
  return `${shown.join(', ')}${more > 0 ? ` +${more}` : ''}`;
}

export function JobsPage() {
  const loc = useLocation();
  const params = new URLSearchParams();
  for (const [k, v] of loc.query) if (KNOWN.has(k) && v) params.set(k, v);
  const qs = params.toString();
  const list = useLoad(() => api<JobList>(`/api/v1/analyze?${qs}`), [qs]);
  const [live, setLive] = useState<string>('');
  const timer = useRef<number | undefined>(undefined);

  const latest = useRef(list);
  latest.current = list;
  const paged = params.has('cursor');
  useEffect(
    () =>
      onJobEvent((e) => {
        const l = latest.current;
        if (e.type !== 'connected') {
          setLive(`${e.type.replace('job.', 'Job ')}: ${e.job_id.slice(0, 8)}`);
          const cur = l.data;
          const row = cur?.items.find((j) => j.job_id === e.job_id);
          if (cur && row && e.type !== 'job.created') {
            const next: Job = {
              ...row,
              status: e.type === 'job.completed' ? 'completed' : 'failed',
              completed_at: e.at,
              ...(e.result
                ? { result: { ...row.result, ...e.result, summary: '', indicators: [] } }
                : {}),
            };
            l.set({ ...cur, items: cur.items.map((j) => (j.job_id === e.job_id ? next : j)) });
          }
        }
        // The first page again, shortly (several events of a burst make one request).
        if (!paged) {
          window.clearTimeout(timer.current);
          timer.current = window.setTimeout(() => latest.current.reload(), 300);
        }
      }),
    [paged],
  );

  function apply(form: HTMLFormElement) {
    const f = new FormData(form);
    const next = new URLSearchParams();
    for (const [k, v] of f) if (typeof v === 'string' && v.trim()) next.set(k, v.trim());
    navigate(`/jobs${next.size ? `?${next}` : ''}`);
  }

  return (
    <Page title="Jobs">
      <form
        class="filters card"
        aria-label="Search jobs"
        onSubmit={(e) => {
          e.preventDefault();
          apply(e.currentTarget as HTMLFormElement);
        }}
      >
        {CHOICES.map((c) => (
          <div class="field" key={c.name}>
            <label for={`q-${c.name}`}>{c.label}</label>
            {/* Uncontrolled, as the text fields: a `value` prop would be put back on every
                render (a live job event, the list's reload) and undo what the user picked
                before pressing Search. `key` starts it again from the URL when that changes. */}
            <select id={`q-${c.name}`} name={c.name} key={qs}>
              <option value="" selected={!params.get(c.name)}>
                any
              </option>
              {c.options.map((o) => (
                <option key={o} value={o} selected={params.get(c.name) === o}>
                  {choiceLabel(c.name, o)}
                </option>
              ))}
            </select>
          </div>
        ))}
        {Object.entries(TEXT_FILTERS).map(([name, f]) => (
          <div class="field" key={`${name}-${qs}`}>
            <label for={`q-${name}`}>{f.label}</label>
            <input
              id={`q-${name}`}
              name={name}
              defaultValue={params.get(name) ?? ''}
              placeholder={f.hint}
            />
          </div>
        ))}
        <div class="field actions">
          <button type="submit">Search</button>
          <button type="button" class="secondary" onClick={() => navigate('/jobs')}>
            Clear
          </button>
        </div>
      </form>
      <p class="muted live" role="status" aria-live="polite">
        Live updates on. {live}
      </p>
      {list.error ? <Problem error={list.error} /> : null}
      {list.data ? <JobTable jobs={list.data.items} /> : list.loading ? <Loading /> : null}
      {list.data?.next_cursor ? (
        <p>
          <Link
            href={`/jobs?${(() => {
              const n = new URLSearchParams(params);
              n.set('cursor', list.data.next_cursor!);
              return n.toString();
            })()}`}
          >
            Older jobs
          </Link>
        </p>
      ) : null}
    </Page>
  );
}

function JobTable(props: { jobs: Job[] }) {
  if (props.jobs.length === 0) return <p>No job matches.</p>;
  return (
    <table class="jobs">
      <caption class="sr-only">Jobs, newest first</caption>
      <THead
        cols={[
          'Created',
          'Subject',
          'From',
          'To',
          'Reported by',
          'Verdict',
          'Threat',
          'Action',
          'Top indicator',
        ]}
      />
      <tbody>
        {props.jobs.map((j) => (
          <tr key={j.job_id} data-job={j.job_id}>
            <td>
              <Link href={`/jobs/${j.job_id}`}>{time(j.created_at)}</Link>
            </td>
            <td class="subject">
              <Link href={`/jobs/${j.job_id}`}>
                {j.subject ?? j.result?.evidence?.message.subject ?? (
                  <span class="muted">{j.job_id.slice(0, 8)}</span>
                )}
              </Link>
            </td>
            <td>
              {j.sender_name ? (
                <>
                  {j.sender_name} <span class="muted">&lt;{j.sender}&gt;</span>
                </>
              ) : (
                (j.sender ?? j.result?.evidence?.message.from.address ?? '—')
              )}
            </td>
            <td>{recipientsText(j)}</td>
            <td>{j.reporter ?? '—'}</td>
            <td>
              <Verdict phishing={j.result?.is_phishing} status={j.status} />
            </td>
            <td>
              <Threat level={j.result?.threat_level} />
            </td>
            <td>{j.result?.recommended_action ?? '—'}</td>
            <td>
              {j.top_indicator ? (
                <span title={j.top_indicator.value}>{j.top_indicator.type}</span>
              ) : (
                '—'
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
