import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, can } from '../api.ts';
import { Quarantine } from '../components/quarantine.tsx';
import { TableCard, THead } from '../components/table.tsx';
import {
  Card,
  Loading,
  ms,
  Page,
  Problem,
  pct,
  Threat,
  time,
  useLoad,
  Verdict,
} from '../components/ui.tsx';
import { onJobEvent } from '../events.ts';
import { Link } from '../router.tsx';
import type { Evidence, Indicator, Job, Trace } from '../types.ts';

function Timeline(props: { trace: Trace }) {
  const total = Math.max(1, props.trace.duration_ms);
  return (
    <ol class="timeline">
      {props.trace.stages.map((s) => {
        const start = s.started_at_ms ?? 0;
        return (
          <li key={s.name} class={`stage stage-${s.status}`}>
            <div class="stage-head">
              <strong>{s.name}</strong> <span class={`badge badge-${s.status}`}>{s.status}</span>{' '}
              <span class="muted">
                {ms(s.duration_ms)}
                {s.started_at_ms !== undefined ? ` from +${ms(start)}` : ''}
                {s.result ? `, p = ${s.result.probability.toFixed(2)}` : ''}
              </span>
            </div>
            <svg class="bar" viewBox="0 0 1000 8" preserveAspectRatio="none" aria-hidden="true">
              <rect
                x={(start / total) * 1000}
                y="0"
                width={Math.max(2, (s.duration_ms / total) * 1000)}
                height="8"
              />
            </svg>
            {s.error ? <p class="error-text">{s.error}</p> : null}
            {s.reason ? <p class="muted">skipped: {s.reason}</p> : null}
            {s.condition ? (
              <p class="muted">
                condition <code>{s.condition}</code>
              </p>
            ) : null}
            {s.analyzers.length + s.providers.length > 0 ? (
              <table class="calls">
                <THead cols={['Call', 'Status', 'Attempts', 'Duration', 'Error']} />
                <tbody>
                  {[...s.providers, ...s.analyzers].map((c) => (
                    <tr key={c.id}>
                      <td>{c.id}</td>
                      <td>
                        {c.status}
                        {c.cached ? ' (cached)' : ''}
                      </td>
                      <td>{c.attempts}</td>
                      <td>{ms(c.duration_ms)}</td>
                      <td>{c.error ?? ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : null}
          </li>
        );
      })}
    </ol>
  );
}

const signed = (n: number) => `${n > 0 ? '+' : n < 0 ? '−' : ''}${Math.abs(n).toFixed(2)}`;

/** The scorer's log-odds by group (its cap applied) and by symbol. */
function SymbolScore(props: { score: NonNullable<Evidence['score']> }) {
  const s = props.score;
  const byGroup = new Map<string, { symbol: string; weight: number }[]>();
  for (const c of s.contributions) {
    const g = c.group ?? '(no group)';
    byGroup.set(g, [...(byGroup.get(g) ?? []), c]);
  }
  return (
    <table>
      <caption>
        Score by group and symbol ({s.by}): bias {signed(s.bias)}, log-odds {signed(s.log_odds)},
        probability {s.probability.toFixed(3)}
      </caption>
      <THead cols={['Group', 'Counted (after its cap)', 'Symbol', 'Log-odds']} />
      <tbody>
        {[...byGroup].flatMap(([g, list]) =>
          list.map((c, n) => (
            <tr key={`${g}-${c.symbol}`}>
              <td>{n === 0 ? g : ''}</td>
              <td>
                {n === 0 && s.groups[g]
                  ? `${signed(s.groups[g].counted)} of ${signed(s.groups[g].sum)}`
                  : ''}
              </td>
              <td>
                <code>{c.symbol}</code>
              </td>
              <td>{signed(c.weight)}</td>
            </tr>
          )),
        )}
      </tbody>
    </table>
  );
}

/** The indicators of the verdict by what they are about (group) and type (symbol). */
function Score(props: { job: Job }) {
  const r = props.job.result!;
  const groups = new Map<string, Indicator[]>();
  for (const i of r.indicators) {
    const g = i.evidence?.kind ?? 'other';
    groups.set(g, [...(groups.get(g) ?? []), i]);
  }
  const stages = props.job.trace?.stages.filter((s) => s.result) ?? [];
  const score = r.evidence?.score;
  return (
    <>
      {score ? <SymbolScore score={score} /> : null}
      {stages.length > 0 ? (
        <table>
          <caption>Probability of phishing by stage</caption>
          <THead cols={['Stage', 'Probability', 'Verdict']} />
          <tbody>
            {stages.map((s) => (
              <tr key={s.name}>
                <td>{s.name}</td>
                <td>{s.result!.probability.toFixed(3)}</td>
                <td>
                  <Verdict phishing={s.result!.is_phishing} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {r.indicators.length === 0 ? (
        <p>No indicator.</p>
      ) : (
        <table>
          <caption>Indicators by group and symbol</caption>
          <THead cols={['Group', 'Symbol', 'Confidence', 'Detail']} />
          <tbody>
            {[...groups].flatMap(([g, list]) =>
              list.map((i, n) => (
                <tr key={`${g}-${i.type}-${i.value}`}>
                  <td>{n === 0 ? g : ''}</td>
                  <td>
                    <code>{i.type}</code>
                  </td>
                  <td>{pct(i.confidence)}</td>
                  <td>{i.value}</td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      )}
    </>
  );
}

function EvidenceView(props: { e: Evidence }) {
  const { e } = props;
  return (
    <>
      <div class="grid">
        <Card title="Message">
          <dl class="facts">
            <dt>Subject</dt>
            <dd>{e.message.subject}</dd>
            <dt>From</dt>
            <dd>
              {e.message.from.display_name ? `${e.message.from.display_name} ` : ''}&lt;
              {e.message.from.address}&gt;
            </dd>
            {e.message.reply_to.length ? (
              <>
                <dt>Reply-To</dt>
                <dd>{e.message.reply_to.join(', ')}</dd>
              </>
            ) : null}
            {e.message.return_path ? (
              <>
                <dt>Return-Path</dt>
                <dd>{e.message.return_path}</dd>
              </>
            ) : null}
            <dt>To</dt>
            <dd>{[...e.message.to, ...e.message.cc].join(', ') || '—'}</dd>
            <dt>Date</dt>
            <dd>{e.message.date}</dd>
          </dl>
        </Card>
        <Card title="Authentication">
          <dl class="facts">
            {(['spf', 'dkim', 'dmarc', 'arc'] as const).map((k) => (
              <Fragment key={k}>
                <dt key={`${k}-t`}>{k.toUpperCase()}</dt>
                <dd key={`${k}-d`}>
                  <span class={`auth auth-${e.auth[k]}`}>{e.auth[k]}</span>
                </dd>
              </Fragment>
            ))}
            <dt>Recorded by</dt>
            <dd>
              {e.auth.authserv_id || '—'} {e.auth.verified ? '(trusted)' : '(not verified)'}
            </dd>
          </dl>
        </Card>
        {e.lists?.length ? (
          <Card title="Allow and block lists">
            <ul class="list-matches">
              {e.lists.map((m) => (
                <li key={`${m.entry_id}-${m.matched}`}>
                  <span class={`badge badge-${m.list}`}>{m.list}</span> {m.kind.replace('_', ' ')}{' '}
                  <code>{m.value}</code> matched {m.matched}
                  {m.note ? <span class="muted"> ({m.note})</span> : null}
                  {m.counted ? null : <p class="muted">not counted: {m.reason}</p>}
                </li>
              ))}
            </ul>
          </Card>
        ) : null}
        <Card title="Received path">
          {e.received.sending_ip ? <p>Sending address: {e.received.sending_ip}</p> : null}
          {e.received.hops.length === 0 ? (
            <p>No Received header.</p>
          ) : (
            <ol class="hops">
              {e.received.hops.map((h, i) => (
                <li key={`${i}-${h.by}`}>
                  from {h.from ?? '?'} {h.ip ? `[${h.ip}]` : ''} by {h.by ?? '?'}{' '}
                  <span class="muted">{h.date ?? ''}</span>
                </li>
              ))}
            </ol>
          )}
        </Card>
      </div>
      <TableCard
        title="URLs"
        id="card-urls"
        items={e.urls}
        empty="No URL."
        cols={['URL', 'Shown as', 'Where']}
        row={(u, i) => (
          <tr key={`${i}-${u.url}`}>
            <td class="wrap">
              <code>{u.decoded}</code>
              {u.hidden ? <span class="badge badge-phish">hidden</span> : null}
            </td>
            <td>{u.text ?? ''}</td>
            <td>
              {u.source
                ? `in ${u.attachment_name ?? 'an attachment'} (${u.source === 'qr' ? 'QR code' : u.source})`
                : `${u.found_in} (${u.element})`}
            </td>
          </tr>
        )}
      />
      <TableCard
        title="Attachments"
        id="card-attachments"
        items={e.attachments}
        empty="No attachment."
        cols={['Name', 'Type', 'Size', 'SHA-256']}
        row={(a, i) => (
          <tr key={`${i}-${a.filename}`}>
            <td>{a.filename}</td>
            <td>
              {a.declared_type}
              {a.sniffed_type && a.sniffed_type !== a.declared_type
                ? ` (is ${a.sniffed_type})`
                : ''}
              {a.findings?.length ? ` · ${a.findings.join(', ')}` : ''}
            </td>
            <td>{a.size ?? '—'}</td>
            <td class="wrap">
              {a.sha256 ? <Link href={`/jobs?sha256=${a.sha256}`}>{a.sha256}</Link> : '—'}
            </td>
          </tr>
        )}
      />
    </>
  );
}

function Feedback(props: { job: Job; onDone: () => void }) {
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
function Campaign(props: { job: Job }) {
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

export function JobPage(props: { id: string }) {
  const job = useLoad(() => api<Job>(`/api/v1/analyze/${props.id}`), [props.id]);
  const done = job.data?.status === 'completed' || job.data?.status === 'failed';
  useEffect(() => {
    if (done) return;
    return onJobEvent((e) => {
      if (e.type === 'connected' || e.job_id === props.id) job.reload();
    });
  }, [props.id, done]);
  if (job.error) {
    return (
      <Page title="Job">
        <Problem
          error={
            job.error instanceof ApiError && job.error.status === 404 ? 'No such job.' : job.error
          }
        />
      </Page>
    );
  }
  const j = job.data;
  if (!j)
    return (
      <Page title="Job">
        <Loading />
      </Page>
    );
  const r = j.result;
  return (
    <Page
      title={
        r?.evidence?.message.subject
          ? `Job: ${r.evidence.message.subject}`
          : `Job ${j.job_id.slice(0, 8)}`
      }
      actions={<Link href={`/jobs/${j.job_id}/message`}>View the message</Link>}
    >
      <div class="grid">
        <Card title="Verdict">
          <p class="verdict" role="status" aria-live="polite">
            <Verdict phishing={r?.is_phishing} status={j.status} />{' '}
            <Threat level={r?.threat_level} />{' '}
            {r ? (
              <span>
                action <strong>{r.recommended_action}</strong>, confidence {pct(r.confidence)}
              </span>
            ) : null}
          </p>
          {r ? <p>{r.summary}</p> : null}
          {j.error ? (
            <p class="error-text">
              {j.error.code}: {j.error.message}
              {j.error.stage ? ` (stage ${j.error.stage})` : ''}
            </p>
          ) : null}
          <dl class="facts">
            <dt>Job</dt>
            <dd>
              <code>{j.job_id}</code>
            </dd>
            <dt>Workflow</dt>
            <dd>{j.workflow}</dd>
            <dt>Created</dt>
            <dd>{time(j.created_at)}</dd>
            <dt>Completed</dt>
            <dd>{time(j.completed_at)}</dd>
          </dl>
        </Card>
        <Feedback job={j} onDone={job.reload} />
        <Quarantine jobId={j.job_id} />
        <Card title="Campaign and other recipients">
          <Campaign job={j} />
        </Card>
      </div>
      {r ? (
        <Card title="Score">
          <Score job={j} />
        </Card>
      ) : null}
      {j.trace ? (
        <Card title="Stages">
          <Timeline trace={j.trace} />
        </Card>
      ) : null}
      {r?.evidence ? <EvidenceView e={r.evidence} /> : null}
    </Page>
  );
}
