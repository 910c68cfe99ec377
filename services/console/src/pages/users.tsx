import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Card, Loading, Page, Problem, time, useLoad } from '../components/ui.tsx';

interface User {
  username: string;
  roles: string[];
  disabled: boolean;
  created_at?: string;
}

export function UsersPage() {
  const users = useLoad(() => api<{ items: User[] }>('/api/v1/users'), []);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState('');
  return (
    <Page title="Users">
      <div class="grid">
        <Card title="Create a user">
          <form
            onSubmit={(e) => {
              e.preventDefault();
              const form = e.currentTarget as HTMLFormElement;
              const f = new FormData(form);
              setError(null);
              setDone('');
              const username = String(f.get('username') ?? '');
              api('/api/v1/users', {
                method: 'POST',
                json: {
                  username,
                  password: String(f.get('password') ?? ''),
                  roles: [String(f.get('role') ?? 'viewer')],
                },
              })
                .then(() => {
                  setDone(`User ${username} created.`);
                  form.reset();
                  users.reload();
                })
                .catch((err: unknown) => setError(err));
            }}
          >
            <div class="field">
              <label for="nu-name">Username</label>
              <input id="nu-name" name="username" required autocomplete="off" />
            </div>
            <div class="field">
              <label for="nu-password">Password</label>
              <input
                id="nu-password"
                name="password"
                type="password"
                required
                autocomplete="new-password"
              />
            </div>
            <div class="field">
              <label for="nu-role">Role</label>
              <select id="nu-role" name="role">
                <option value="viewer">viewer</option>
                <option value="analyst">analyst</option>
                <option value="admin">admin</option>
              </select>
            </div>
            <button type="submit">Create</button>
            <p role="status">{done}</p>
            {error ? <Problem error={error} /> : null}
          </form>
        </Card>
        <Card title="Users">
          {users.error ? <Problem error={users.error} /> : null}
          {users.data ? (
            <table>
              <thead>
                <tr>
                  <th scope="col">Username</th>
                  <th scope="col">Roles</th>
                  <th scope="col">State</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {users.data.items.map((u) => (
                  <tr key={u.username}>
                    <td>{u.username}</td>
                    <td>{u.roles.join(', ')}</td>
                    <td>{u.disabled ? 'disabled' : 'active'}</td>
                    <td>{time(u.created_at)}</td>
                    <td>
                      <button
                        type="button"
                        class="secondary"
                        onClick={() => {
                          setError(null);
                          api(`/api/v1/users/${encodeURIComponent(u.username)}`, {
                            method: 'PATCH',
                            json: { disabled: !u.disabled },
                          })
                            .then(() => users.reload())
                            .catch((err: unknown) => setError(err));
                        }}
                      >
                        {u.disabled ? 'Enable' : 'Disable'} {u.username}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <Loading />
          )}
        </Card>
      </div>
    </Page>
  );
}
