import { api } from '../api.ts';
import { THead } from '../components/table.tsx';
import { Card, Loading, Page, Problem, useLoad } from '../components/ui.tsx';
import { Link } from '../router.tsx';

interface Stats {
  window_hours: number;
  jobs_by_hour: {
    hour: string;
    phishing: number;
    legitimate: number;
    failed: number;
    pending: number;
  }[];
  failing_analyzers: { analyzer: string; failures: number }[];
  queue: { depth: number | null; dead_letters: number | null };
}
interface Health {
  status: string;
  version: string;
  config_version: string;
  components: Record<string, { status: string; latency_ms: number; error?: string }>;
  plugins: Record<string, { status: string; latency_ms: number; error?: string }>;
}

const SERIES = ['phishing', 'legitimate', 'failed', 'pending'] as const;

function Chart(props: { stats: Stats }) {
  const now = Date.now();
  const hours: Stats['jobs_by_hour'] = [];
  const by = new Map(props.stats.jobs_by_hour.map((h) => [new Date(h.hour).getTime(), h]));
  const top = Math.floor(now / 3600_000) * 3600_000;
  for (let i = props.stats.window_hours - 1; i >= 0; i--) {
    const t = top - i * 3600_000;
    hours.push(
      by.get(t) ?? {
        hour: new Date(t).toISOString(),
        phishing: 0,
        legitimate: 0,
        failed: 0,
        pending: 0,
      },
    );
  }
  const max = Math.max(1, ...hours.map((h) => h.phishing + h.legitimate + h.failed + h.pending));
  const W = 20;
  const H = 120;
  const total = (k: (typeof SERIES)[number]) => hours.reduce((n, h) => n + h[k], 0);
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${hours.length * W} ${H}`}
        role="img"
        aria-label={`Jobs per hour over the last ${props.stats.window_hours} hours: ${SERIES.map((k) => `${total(k)} ${k}`).join(', ')}`}
        preserveAspectRatio="none"
      >
        {hours.map((h, i) => {
          let y = H;
          return SERIES.map((k) => {
            const v = (h[k] / max) * (H - 4);
            y -= v;
            return v > 0 ? (
              <rect
                key={`${h.hour}-${k}`}
                class={`s-${k}`}
                x={i * W + 2}
                y={y}
                width={W - 4}
                height={v}
              >
                <title>{`${new Date(h.hour).toLocaleString()}: ${h[k]} ${k}`}</title>
              </rect>
            ) : null;
          });
        })}
      </svg>
      <figcaption>
        {SERIES.map((k) => (
          <span key={k} class="legend">
            <span class={`swatch s-${k}`} aria-hidden="true" /> {k}: {total(k)}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

export function OverviewPage() {
  const stats = useLoad(() => api<Stats>('/api/v1/system/stats'), []);
  const health = useLoad(() => api<Health>('/api/v1/system/health', { accept: [503] }), []);
  return (
    <Page title="Overview">
      <div class="grid">
        <Card title="Jobs and verdicts, last 24 hours" wide>
          {stats.error ? <Problem error={stats.error} what="Statistics" /> : null}
          {stats.data ? <Chart stats={stats.data} /> : stats.loading ? <Loading /> : null}
          <p>
            <Link href="/jobs">All jobs</Link> ·{' '}
            <Link href="/jobs?is_phishing=true">Phishing only</Link>
          </p>
        </Card>
        <Card title="Queue">
          {stats.data ? (
            <dl class="facts">
              <dt>Waiting for analysis</dt>
              <dd>{stats.data.queue.depth ?? 'unknown'}</dd>
              <dt>Dead letters</dt>
              <dd>{stats.data.queue.dead_letters ?? 'unknown'}</dd>
            </dl>
          ) : (
            <Loading />
          )}
        </Card>
        <Card title="Failing analyzers">
          {stats.data ? (
            stats.data.failing_analyzers.length === 0 ? (
              <p>No analyzer failed or timed out in the last 24 hours.</p>
            ) : (
              <table>
                <THead cols={['Analyzer', 'Failures and timeouts']} />
                <tbody>
                  {stats.data.failing_analyzers.map((f) => (
                    <tr key={f.analyzer}>
                      <td>{f.analyzer}</td>
                      <td>{f.failures}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          ) : (
            <Loading />
          )}
        </Card>
        <Card title="Health">
          {health.error ? <Problem error={health.error} /> : null}
          {health.data ? (
            <>
              <p>
                Status:{' '}
                <span class={`badge ${health.data.status === 'ok' ? 'badge-ok' : 'badge-phish'}`}>
                  {health.data.status}
                </span>{' '}
                <span class="muted">
                  version {health.data.version}, configuration{' '}
                  {health.data.config_version.slice(0, 12)}
                </span>
              </p>
              <table>
                <THead cols={['Component', 'Status', 'Latency']} />
                <tbody>
                  {Object.entries({ ...health.data.components, ...health.data.plugins }).map(
                    ([name, c]) => (
                      <tr key={name}>
                        <td>{name}</td>
                        <td>
                          {c.status}
                          {c.error ? <span class="muted"> ({c.error})</span> : null}
                        </td>
                        <td>{c.latency_ms} ms</td>
                      </tr>
                    ),
                  )}
                </tbody>
              </table>
            </>
          ) : health.loading ? (
            <Loading />
          ) : null}
        </Card>
      </div>
    </Page>
  );
}
