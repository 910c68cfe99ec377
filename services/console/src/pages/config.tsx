import { useState } from 'preact/hooks';
import { api, can } from '../api.ts';
import { THead } from '../components/table.tsx';
import { Card, Loading, Page, Problem, time, useLoad } from '../components/ui.tsx';
import { toYaml } from '../yaml.ts';

interface ConfigView {
  version: string;
  analyzer: { timeout_ms: number; min_confidence: number };
  workflow: { default_workflow_id: string; max_retries: number };
}
interface Reload {
  old_version: string;
  new_version: string;
  changed: { platform: boolean; workflows: boolean; analyzers: string[] };
}

interface Versions {
  current: string;
  items: { version: string; actor: string | null; created_at: string; recorded_at: string }[];
}

function VersionList(props: { n: number }) {
  const v = useLoad(() => api<Versions>('/api/v1/config/versions'), [props.n]);
  if (v.error) return <Problem error={v.error} what="The version history" />;
  if (!v.data) return <Loading />;
  return (
    <table>
      <caption>Versions run, newest first</caption>
      <THead cols={['Version', 'Made current by', 'Current since', 'First seen']} />
      <tbody>
        {v.data.items.map((x) => (
          <tr key={x.version}>
            <td>
              <code>{x.version.slice(0, 12)}</code>
              {x.version === v.data!.current ? <span class="badge badge-ok">running</span> : null}
            </td>
            <td>{x.actor ?? 'start-up'}</td>
            <td>{time(x.recorded_at)}</td>
            <td>{time(x.created_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function ConfigPage() {
  const cfg = useLoad(() => api<ConfigView>('/api/v1/config'), []);
  const [reloads, setReloads] = useState<(Reload & { at: string })[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [n, setN] = useState(0);
  return (
    <Page title="Configuration">
      <div class="grid">
        <Card title="Running configuration">
          {cfg.error ? <Problem error={cfg.error} /> : null}
          {cfg.data ? (
            <>
              <p>
                Version <code>{cfg.data.version}</code>
              </p>
              <pre class="code">
                {toYaml({ analyzer: cfg.data.analyzer, workflow: cfg.data.workflow })}
              </pre>
            </>
          ) : (
            <Loading />
          )}
        </Card>
        <Card title="Reload">
          <p>
            Reads <code>config/service.yaml</code> and <code>config/workflows.yaml</code> again. An
            invalid file changes nothing and every problem is listed.
          </p>
          {can('admin') ? (
            <button
              type="button"
              disabled={busy}
              onClick={() => {
                setBusy(true);
                setError(null);
                api<Reload>('/api/v1/config/reload', { method: 'POST' })
                  .then((r) => {
                    setReloads((l) => [{ ...r, at: new Date().toISOString() }, ...l]);
                    cfg.reload();
                    setN((x) => x + 1);
                  })
                  .catch((e: unknown) => setError(e))
                  .finally(() => setBusy(false));
              }}
            >
              {busy ? 'Reloading…' : 'Reload the configuration'}
            </button>
          ) : (
            <p class="muted">Reloading needs the admin role.</p>
          )}
          {error ? <Problem error={error} /> : null}
        </Card>
      </div>
      {can('admin') ? (
        <Card title="Version history">
          <VersionList n={n} />
        </Card>
      ) : null}
      <Card title="Reloads from this page and what changed">
        {reloads.length === 0 ? (
          <p class="muted">No reload from this page yet.</p>
        ) : (
          <table>
            <THead cols={['When', 'From', 'To', 'Changed']} />
            <tbody role="status">
              {reloads.map((r) => (
                <tr key={r.at}>
                  <td>{time(r.at)}</td>
                  <td>
                    <code>{r.old_version.slice(0, 12)}</code>
                  </td>
                  <td>
                    <code>{r.new_version.slice(0, 12)}</code>
                  </td>
                  <td>
                    {r.old_version === r.new_version
                      ? 'nothing (same content)'
                      : [
                          r.changed.platform ? 'platform settings' : '',
                          r.changed.workflows ? 'workflows' : '',
                          r.changed.analyzers.length
                            ? `analyzers: ${r.changed.analyzers.join(', ')}`
                            : '',
                        ]
                          .filter(Boolean)
                          .join('; ') || 'other settings'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
    </Page>
  );
}
