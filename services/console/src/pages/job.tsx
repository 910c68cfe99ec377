import { useEffect } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { EvidenceView } from '../components/job-evidence.tsx';
import { Campaign, Feedback } from '../components/job-feedback.tsx';
import { Score, Timeline } from '../components/job-score.tsx';
import { Quarantine } from '../components/quarantine.tsx';
import {
  Card,
  Loading,
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
import type { Job } from '../types.ts';

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
