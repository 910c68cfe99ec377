import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { useFormSubmit } from '../components/form.tsx';
import { Card, Loading, Page, Problem, time, useLoad } from '../components/ui.tsx';

interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: string | null;
  created_at: string;
}
interface Delivery {
  id?: string;
  event?: string;
  status?: string;
  attempts?: number;
  response_status?: number | null;
  at?: string;
  created_at?: string;
}

const EVENTS = [
  'job.completed',
  'job.failed',
  'verdict.phishing',
  'feedback.created',
  'campaign.updated',
];

function Deliveries(props: { id: string }) {
  const d = useLoad(
    () => api<{ items: Delivery[] }>(`/api/v1/webhooks/${props.id}/deliveries`),
    [props.id],
  );
  if (d.error) return <Problem error={d.error} what="Delivery history" />;
  if (!d.data) return <Loading />;
  if (d.data.items.length === 0) return <p class="muted">No delivery yet.</p>;
  return (
    <ul>
      {d.data.items.slice(0, 20).map((x, i) => (
        <li key={x.id ?? i}>
          {time(x.at ?? x.created_at)} {x.event ?? ''} {x.status ?? ''}{' '}
          {x.response_status ? `HTTP ${x.response_status}` : ''}{' '}
          {x.attempts ? `(${x.attempts} attempts)` : ''}
        </li>
      ))}
    </ul>
  );
}

export function WebhooksPage() {
  const hooks = useLoad(() => api<{ items: Webhook[] }>('/api/v1/webhooks'), []);
  const { error, setError, status, onSubmit } = useFormSubmit();
  const [open, setOpen] = useState<string | null>(null);
  return (
    <Page title="Webhooks">
      <div class="grid">
        <Card title="Add a webhook">
          <form
            onSubmit={onSubmit(
              (f) =>
                api<{ secret?: string }>('/api/v1/webhooks', {
                  method: 'POST',
                  json: {
                    url: String(f.get('url') ?? ''),
                    events: f.getAll('events').map(String),
                    ...(f.get('description') ? { description: String(f.get('description')) } : {}),
                  },
                }).then((w) =>
                  w.secret ? `Created. Its signing secret, shown once: ${w.secret}` : 'Created.',
                ),
              hooks.reload,
            )}
          >
            <div class="field">
              <label for="wh-url">URL</label>
              <input
                id="wh-url"
                name="url"
                type="url"
                required
                placeholder="https://hooks.example.org/trawl"
              />
            </div>
            <fieldset>
              <legend>Events</legend>
              {EVENTS.map((ev) => (
                <label key={ev} class="check">
                  <input
                    type="checkbox"
                    name="events"
                    value={ev}
                    defaultChecked={ev === 'job.completed'}
                  />{' '}
                  {ev}
                </label>
              ))}
            </fieldset>
            <div class="field">
              <label for="wh-desc">Description</label>
              <input id="wh-desc" name="description" />
            </div>
            <button type="submit">Add</button>
            <p role="status" class="wrap">
              {status}
            </p>
            {error ? <Problem error={error} what="Webhooks" /> : null}
          </form>
        </Card>
        <Card title="Webhooks">
          {hooks.error ? <Problem error={hooks.error} what="Webhooks" /> : null}
          {hooks.data ? (
            hooks.data.items.length === 0 ? (
              <p>No webhook.</p>
            ) : (
              <ul class="hooks">
                {hooks.data.items.map((w) => (
                  <li key={w.id}>
                    <code class="wrap">{w.url}</code> · {w.events.join(', ')} ·{' '}
                    {w.enabled
                      ? 'enabled'
                      : `disabled${w.disabled_reason ? ` (${w.disabled_reason})` : ''}`}
                    {w.failing_since ? ` · failing since ${time(w.failing_since)}` : ''}{' '}
                    <button
                      type="button"
                      class="secondary"
                      aria-expanded={open === w.id}
                      onClick={() => setOpen(open === w.id ? null : w.id)}
                    >
                      Deliveries
                    </button>{' '}
                    <button
                      type="button"
                      class="secondary"
                      onClick={() =>
                        api(`/api/v1/webhooks/${w.id}`, { method: 'DELETE' })
                          .then(() => hooks.reload())
                          .catch((err: unknown) => setError(err))
                      }
                    >
                      Delete
                    </button>
                    {open === w.id ? <Deliveries id={w.id} /> : null}
                  </li>
                ))}
              </ul>
            )
          ) : hooks.loading ? (
            <Loading />
          ) : null}
        </Card>
      </div>
    </Page>
  );
}
