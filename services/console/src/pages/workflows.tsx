import { useState } from 'preact/hooks';
import { api, can } from '../api.ts';
import { Card, Loading, ms, Page, Problem, useLoad, Verdict } from '../components/ui.tsx';
import { Link } from '../router.tsx';
import type { Result, Trace } from '../types.ts';
import { toYaml } from '../yaml.ts';

interface Workflow {
  id: string;
  name: string;
  description?: string;
  version?: number;
  stages: { name: string; type: string; analyzers: { id: string }[] }[];
}

export function WorkflowsPage() {
  const list = useLoad(
    () =>
      api<{ items: Workflow[]; default_workflow_id: string; version: string }>('/api/v1/workflows'),
    [],
  );
  return (
    <Page title="Workflows">
      {list.error ? <Problem error={list.error} /> : null}
      {list.data ? (
        <table>
          <caption class="sr-only">Workflows</caption>
          <thead>
            <tr>
              <th scope="col">Workflow</th>
              <th scope="col">Stages</th>
              <th scope="col">Description</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((w) => (
              <tr key={w.id}>
                <td>
                  <Link href={`/workflows/${encodeURIComponent(w.id)}`}>{w.name}</Link>{' '}
                  <span class="muted">({w.id})</span>
                  {w.id === list.data!.default_workflow_id ? (
                    <span class="badge badge-ok">default</span>
                  ) : null}
                </td>
                <td>{w.stages.map((s) => s.name).join(' → ')}</td>
                <td>{w.description ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <Loading />
      )}
    </Page>
  );
}

const SAMPLE_EMAIL = {
  headers: {
    subject: 'Your account will be suspended',
    sender: 'security@example-bank.test',
    recipients: ['you@example.org'],
    date: '2026-11-27T09:00:00Z',
  },
  body_text:
    'Verify your password within 24 hours at http://example-bank.test.verify.example/login',
};

export function WorkflowPage(props: { id: string }) {
  const wf = useLoad(
    () => api<Workflow>(`/api/v1/workflows/${encodeURIComponent(props.id)}`),
    [props.id],
  );
  const [draft, setDraft] = useState<string | null>(null);
  const [validation, setValidation] = useState<{
    valid: boolean;
    problems: { path: string; message: string }[];
  } | null>(null);
  const [email, setEmail] = useState(JSON.stringify(SAMPLE_EMAIL, null, 2));
  const [run, setRun] = useState<{
    status: string;
    result?: Result;
    trace: Trace;
    error?: { message: string };
  } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  if (wf.error)
    return (
      <Page title="Workflow">
        <Problem error={wf.error} />
      </Page>
    );
  if (!wf.data)
    return (
      <Page title="Workflow">
        <Loading />
      </Page>
    );
  const text = draft ?? JSON.stringify(wf.data, null, 2);

  function parse(s: string): unknown {
    try {
      return JSON.parse(s);
    } catch (e) {
      throw new Error(`not valid JSON: ${(e as Error).message}`);
    }
  }

  return (
    <Page
      title={`Workflow: ${wf.data.name}`}
      actions={<Link href="/workflows">All workflows</Link>}
    >
      <Card title="Definition (YAML)">
        <pre class="code">{toYaml(wf.data)}</pre>
      </Card>
      {can('analyst') ? (
        <div class="grid">
          <Card title="Validate a change">
            <div class="field">
              <label for="wf-json">Workflow (JSON)</label>
              <textarea
                id="wf-json"
                rows={14}
                value={text}
                onInput={(e) => setDraft((e.currentTarget as HTMLTextAreaElement).value)}
              />
            </div>
            <button
              type="button"
              onClick={() => {
                setError(null);
                setValidation(null);
                Promise.resolve()
                  .then(() =>
                    api<typeof validation>('/api/v1/workflows/validate', {
                      method: 'POST',
                      json: parse(text),
                    }),
                  )
                  .then(setValidation, setError);
              }}
            >
              Validate
            </button>
            {validation ? (
              <div role="status">
                {validation.valid ? (
                  <p>The workflow is valid.</p>
                ) : (
                  <ul class="problems">
                    {validation.problems.map((p) => (
                      <li key={p.path + p.message}>
                        <code>{p.path || '/'}</code> {p.message}
                      </li>
                    ))}
                  </ul>
                )}
              </div>
            ) : null}
          </Card>
          <Card title="Dry run">
            <div class="field">
              <label for="dry-email">Email (JSON, the shape of POST /analyze)</label>
              <textarea
                id="dry-email"
                rows={14}
                value={email}
                onInput={(e) => setEmail((e.currentTarget as HTMLTextAreaElement).value)}
              />
            </div>
            <button
              type="button"
              disabled={busy}
              onClick={() => {
                setError(null);
                setRun(null);
                setBusy(true);
                Promise.resolve()
                  .then(() =>
                    api<NonNullable<typeof run>>(
                      `/api/v1/workflows/${encodeURIComponent(props.id)}/dry-run`,
                      { method: 'POST', json: parse(email) },
                    ),
                  )
                  .then(setRun, setError)
                  .finally(() => setBusy(false));
              }}
            >
              {busy ? 'Running…' : 'Run without storing'}
            </button>
            {run ? (
              <div role="status">
                <p>
                  {run.status}: <Verdict phishing={run.result?.is_phishing} status={run.status} />{' '}
                  {run.result?.summary ?? run.error?.message ?? ''}
                </p>
                <table>
                  <caption>Trace ({ms(run.trace.duration_ms)})</caption>
                  <thead>
                    <tr>
                      <th scope="col">Stage</th>
                      <th scope="col">Status</th>
                      <th scope="col">Duration</th>
                      <th scope="col">Calls</th>
                    </tr>
                  </thead>
                  <tbody>
                    {run.trace.stages.map((s) => (
                      <tr key={s.name}>
                        <td>{s.name}</td>
                        <td>{s.status}</td>
                        <td>{ms(s.duration_ms)}</td>
                        <td>
                          {s.analyzers
                            .map((a) => `${a.id} ${a.status} ${ms(a.duration_ms)}`)
                            .join('; ')}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            ) : null}
          </Card>
        </div>
      ) : null}
      {error ? <Problem error={error} /> : null}
    </Page>
  );
}
