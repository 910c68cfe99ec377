import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { TextArea } from '../components/form.tsx';
import { Card, Page, Problem, Threat, useLoad, Verdict } from '../components/ui.tsx';
import { onJobEvent } from '../events.ts';
import { Link } from '../router.tsx';
import type { Job } from '../types.ts';

interface Item {
  key: string;
  name: string;
  state: 'sending' | 'queued' | 'completed' | 'failed' | 'refused';
  job_id?: string;
  error?: unknown;
  phishing?: boolean;
  threat?: string;
}

const MAX_BYTES = 25 * 1024 * 1024;

function contentType(name: string): string {
  return name.toLowerCase().endsWith('.msg') ? 'application/vnd.ms-outlook' : 'message/rfc822';
}

export function SubmitPage() {
  const workflows = useLoad(
    () =>
      api<{ items: { id: string; name: string }[]; default_workflow_id: string }>(
        '/api/v1/workflows',
      ),
    [],
  );
  const [items, setItems] = useState<Item[]>([]);
  const [workflow, setWorkflow] = useState('');
  // a user's report to the reporting mailbox: the original inside it is analysed (issue 32)
  const [report, setReport] = useState(false);
  const [over, setOver] = useState(false);
  const [pasted, setPasted] = useState('');
  const update = (key: string, patch: Partial<Item>) =>
    setItems((list) => list.map((i) => (i.key === key ? { ...i, ...patch } : i)));

  const mine = useRef(items);
  mine.current = items;
  /** Reads a submitted job (after a reconnection, or when the result was quick). */
  const check = (key: string, jobId: string) =>
    api<Job>(`/api/v1/analyze/${jobId}`)
      .then((j) => {
        if (j.status === 'completed' || j.status === 'failed')
          update(key, {
            state: j.status,
            ...(j.result ? { phishing: j.result.is_phishing, threat: j.result.threat_level } : {}),
          });
      })
      .catch(() => undefined);
  useEffect(
    () =>
      onJobEvent((e) => {
        if (e.type === 'connected') {
          for (const i of mine.current)
            if (i.state === 'queued' && i.job_id) void check(i.key, i.job_id);
          return;
        }
        if (e.type === 'job.created') return;
        setItems((list) =>
          list.map((i) =>
            i.job_id === e.job_id
              ? {
                  ...i,
                  state: e.type === 'job.completed' ? 'completed' : 'failed',
                  ...(e.result
                    ? { phishing: e.result.is_phishing, threat: e.result.threat_level }
                    : {}),
                  ...(e.error ? { error: new ApiError(0, e.error.code, e.error.message) } : {}),
                }
              : i,
          ),
        );
      }),
    [],
  );

  async function submit(name: string, body: Blob | string, type: string) {
    const key = `${Date.now()}-${Math.random()}`;
    setItems((l) => [{ key, name, state: 'sending' }, ...l]);
    try {
      const size = typeof body === 'string' ? body.length : body.size;
      if (size > MAX_BYTES) throw new Error(`${name} is larger than 25 MiB`);
      const params = new URLSearchParams();
      if (workflow) params.set('workflow_id', workflow);
      if (report) params.set('report', 'true');
      const q = params.size ? `?${params}` : '';
      const r = await api<{ job_id: string }>(`/api/v1/analyze/raw${q}`, {
        method: 'POST',
        headers: { 'content-type': type },
        body,
      });
      update(key, { state: 'queued', job_id: r.job_id });
      // The result may already be there (a fast analysis, or an event missed while connecting).
      setTimeout(() => void check(key, r.job_id), 1500);
    } catch (e) {
      update(key, { state: 'refused', error: e });
    }
  }

  function files(list: FileList | null) {
    for (const f of Array.from(list ?? [])) void submit(f.name, f, contentType(f.name));
  }

  return (
    <Page title="Submit messages">
      <Card title="Messages">
        {workflows.data ? (
          <div class="field">
            <label for="wf">Workflow</label>
            <select
              id="wf"
              value={workflow}
              onChange={(e) => setWorkflow((e.currentTarget as HTMLSelectElement).value)}
            >
              <option value="">default ({workflows.data.default_workflow_id})</option>
              {workflows.data.items.map((w) => (
                <option key={w.id} value={w.id}>
                  {w.name} ({w.id})
                </option>
              ))}
            </select>
          </div>
        ) : null}
        <div class="field check">
          <input
            id="as-report"
            type="checkbox"
            checked={report}
            onChange={(e) => setReport((e.currentTarget as HTMLInputElement).checked)}
            aria-describedby="as-report-hint"
          />
          <label for="as-report">This is a user's report</label>
          <small id="as-report-hint" class="muted">
            A message someone forwarded or attached to report it: the original inside is analysed
            and the sender of the report recorded as its reporter (as{' '}
            <code>trawl analyze --report</code>).
          </small>
        </div>
        <label
          for="files"
          class={`drop ${over ? 'over' : ''}`}
          onDragOver={(e) => {
            e.preventDefault();
            setOver(true);
          }}
          onDragLeave={() => setOver(false)}
          onDrop={(e) => {
            e.preventDefault();
            setOver(false);
            files(e.dataTransfer?.files ?? null);
          }}
        >
          <span class="drop-text">Drop .eml or .msg files here, or</span>
          <span class="button">Choose files</span>
        </label>
        <input
          id="files"
          class="sr-only"
          type="file"
          multiple
          accept=".eml,.msg,message/rfc822,application/vnd.ms-outlook"
          onChange={(e) => files((e.currentTarget as HTMLInputElement).files)}
        />
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (pasted.trim()) void submit('pasted message', pasted, 'message/rfc822');
            setPasted('');
          }}
        >
          <TextArea
            id="paste"
            label="Or paste a message (headers and body, as saved by a mail program)"
            rows={8}
            value={pasted}
            onInput={setPasted}
          />
          <button type="submit">Analyze the pasted message</button>
        </form>
      </Card>
      <Card title="Progress and results">
        {items.length === 0 ? <p class="muted">Nothing submitted yet.</p> : null}
        <ul class="submissions" aria-live="polite">
          {items.map((i) => (
            <li key={i.key} data-state={i.state}>
              <strong>{i.name}</strong>: {i.state === 'sending' ? 'sending…' : null}
              {i.state === 'queued' ? 'queued, analysing…' : null}
              {i.state === 'completed' ? (
                <>
                  <Verdict phishing={i.phishing} /> <Threat level={i.threat} />
                </>
              ) : null}
              {i.state === 'failed' ? <span class="badge badge-failed">failed</span> : null}
              {i.job_id ? (
                <>
                  {' '}
                  <Link href={`/jobs/${i.job_id}`}>open the job</Link>
                </>
              ) : null}
              {i.error ? <Problem error={i.error} /> : null}
            </li>
          ))}
        </ul>
      </Card>
    </Page>
  );
}
