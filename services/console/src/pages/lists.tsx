import { api } from '../api.ts';
import { Field, useFormSubmit } from '../components/form.tsx';
import { THead } from '../components/table.tsx';
import { Card, Loading, Page, Problem, time, useLoad } from '../components/ui.tsx';

interface ListEntry {
  id: string;
  list: 'allow' | 'block';
  kind: string;
  value: string;
  note: string | null;
  created_by: string | null;
  created_at: string;
  expires_at: string | null;
  expired: boolean;
}

const KINDS: { value: string; label: string }[] = [
  { value: 'sender', label: 'Sender address' },
  { value: 'sender_domain', label: 'Sender domain (and its subdomains)' },
  { value: 'url_host', label: 'URL host (and its subdomains)' },
  { value: 'sha256', label: 'Attachment SHA-256' },
];
const KIND_LABEL = Object.fromEntries(KINDS.map((k) => [k.value, k.label]));

/**
 * The allow and block lists (admin, issue 32): add and remove entries; every change is audited and
 * applies to the next message the analyzers see.
 */
export function ListsPage() {
  const entries = useLoad(() => api<{ items: ListEntry[] }>('/api/v1/lists'), []);
  const { error, setError, status, onSubmit } = useFormSubmit();
  return (
    <Page title="Allow and block lists">
      <div class="grid">
        <Card title="Add an entry">
          <p class="muted">
            A block always wins over an allow. An allow never excuses a threat-feed listing or a
            malicious attachment, and an allowed sender counts only when its domain authenticated
            the message (DMARC or DKIM).
          </p>
          <form
            onSubmit={onSubmit((f) => {
              const expires = String(f.get('expires') ?? '');
              const note = String(f.get('note') ?? '').trim();
              return api<ListEntry>('/api/v1/lists', {
                method: 'POST',
                json: {
                  list: String(f.get('list') ?? 'block'),
                  kind: String(f.get('kind') ?? 'sender'),
                  value: String(f.get('value') ?? ''),
                  ...(note ? { note } : {}),
                  ...(expires ? { expires_at: new Date(expires).toISOString() } : {}),
                },
              }).then((e) => `${e.value} added to the ${e.list} list.`);
            }, entries.reload)}
          >
            <div class="field">
              <label for="le-list">List</label>
              <select id="le-list" name="list">
                <option value="block">block</option>
                <option value="allow">allow</option>
              </select>
            </div>
            <div class="field">
              <label for="le-kind">Kind</label>
              <select id="le-kind" name="kind">
                {KINDS.map((k) => (
                  <option key={k.value} value={k.value}>
                    {k.label}
                  </option>
                ))}
              </select>
            </div>
            <Field label="Value" name="value" required autocomplete="off" />
            <Field label="Note" name="note" autocomplete="off" hint="why; shown in the evidence" />
            <Field label="Expires" name="expires" type="datetime-local" hint="empty: never" />
            <button type="submit">Add</button>
            <p role="status">{status}</p>
            {error ? <Problem error={error} /> : null}
          </form>
        </Card>
        <Card title="Entries" wide>
          {entries.error ? <Problem error={entries.error} /> : null}
          {entries.data ? (
            entries.data.items.length === 0 ? (
              <p class="muted">No entry yet.</p>
            ) : (
              <table class="lists">
                <THead
                  cols={[
                    'List',
                    'Kind',
                    'Value',
                    'Note',
                    'By',
                    'Added',
                    'Expires',
                    <span class="sr-only">Actions</span>,
                  ]}
                />
                <tbody>
                  {entries.data.items.map((e) => (
                    <tr key={e.id} data-entry={e.id}>
                      <td>
                        <span class={`badge badge-${e.list}`}>{e.list}</span>
                      </td>
                      <td>{KIND_LABEL[e.kind] ?? e.kind}</td>
                      <td>
                        <code>{e.value}</code>
                      </td>
                      <td>{e.note ?? ''}</td>
                      <td>{e.created_by ?? ''}</td>
                      <td>{time(e.created_at)}</td>
                      <td>
                        {e.expires_at
                          ? `${time(e.expires_at)}${e.expired ? ' (expired)' : ''}`
                          : 'never'}
                      </td>
                      <td>
                        <button
                          type="button"
                          class="secondary"
                          onClick={() => {
                            setError(null);
                            api(`/api/v1/lists/${e.id}`, { method: 'DELETE' })
                              .then(() => entries.reload())
                              .catch((err: unknown) => setError(err));
                          }}
                        >
                          Remove {e.value}
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          ) : (
            <Loading />
          )}
        </Card>
      </div>
    </Page>
  );
}
