import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, can } from '../api.ts';
import { TextArea } from '../components/form.tsx';
import { THead } from '../components/table.tsx';
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
          <THead cols={['Workflow', 'Stages', 'Description']} />
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

/**
 * A card where JSON is edited and sent with a button (`onSend`); with `busyAction`, the button is
 * disabled and says so while it runs.
 */
function JsonCard(props: {
  title: string;
  id: string;
  label: string;
  value: string;
  onInput: (v: string) => void;
  action: string;
  busyAction?: string;
  onSend: () => Promise<void>;
  children: ComponentChildren;
}) {
  const [busy, setBusy] = useState(false);
  return (
    <Card title={props.title}>
      <TextArea
        id={props.id}
        label={props.label}
        rows={14}
        value={props.value}
        onInput={props.onInput}
      />
      <button
        type="button"
        disabled={props.busyAction === undefined ? undefined : busy}
        onClick={() => {
          setBusy(true);
          void props.onSend().finally(() => setBusy(false));
        }}
      >
        {busy && props.busyAction !== undefined ? props.busyAction : props.action}
      </button>
      {props.children}
    </Card>
  );
}

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
  /** Posts `source` parsed as JSON to `path`: clears the error and `show`, then shows the answer or the error. */
  function post<T>(path: string, source: string, show: (v: T | null) => void): Promise<void> {
    setError(null);
    show(null);
    return Promise.resolve()
      .then(() => api<T>(path, { method: 'POST', json: parse(source) }))
      .then(show, setError);
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
          <JsonCard
            title="Validate a change"
            id="wf-json"
            label="Workflow (JSON)"
            value={text}
            onInput={setDraft}
            action="Validate"
            onSend={() => post('/api/v1/workflows/validate', text, setValidation)}
          >
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
          </JsonCard>
          <JsonCard
            title="Dry run"
            id="dry-email"
            label="Email (JSON, the shape of POST /analyze)"
            value={email}
            onInput={setEmail}
            action="Run without storing"
            busyAction="Running…"
            onSend={() =>
              post(`/api/v1/workflows/${encodeURIComponent(props.id)}/dry-run`, email, setRun)
            }
          >
            {run ? (
              <div role="status">
                <p>
                  {run.status}: <Verdict phishing={run.result?.is_phishing} status={run.status} />{' '}
                  {run.result?.summary ?? run.error?.message ?? ''}
                </p>
                <table>
                  <caption>Trace ({ms(run.trace.duration_ms)})</caption>
                  <THead cols={['Stage', 'Status', 'Duration', 'Calls']} />
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
          </JsonCard>
        </div>
      ) : null}
      {error ? <Problem error={error} /> : null}
    </Page>
  );
}
