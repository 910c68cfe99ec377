import { api } from '../api.ts';
import { Field, useFormSubmit } from '../components/form.tsx';
import { THead } from '../components/table.tsx';
import { Card, Loading, Page, Problem, time, useLoad } from '../components/ui.tsx';

interface User {
  username: string;
  roles: string[];
  disabled: boolean;
  created_at?: string;
}

export function UsersPage() {
  const users = useLoad(() => api<{ items: User[] }>('/api/v1/users'), []);
  const { error, setError, status, onSubmit } = useFormSubmit();
  return (
    <Page title="Users">
      <div class="grid">
        <Card title="Create a user">
          <form
            onSubmit={onSubmit((f) => {
              const username = String(f.get('username') ?? '');
              return api('/api/v1/users', {
                method: 'POST',
                json: {
                  username,
                  password: String(f.get('password') ?? ''),
                  roles: [String(f.get('role') ?? 'viewer')],
                },
              }).then(() => `User ${username} created.`);
            }, users.reload)}
          >
            <Field label="Username" name="username" required autocomplete="off" />
            <Field
              label="Password"
              name="password"
              type="password"
              required
              autocomplete="new-password"
            />
            <div class="field">
              <label for="nu-role">Role</label>
              <select id="nu-role" name="role">
                <option value="viewer">viewer</option>
                <option value="analyst">analyst</option>
                <option value="admin">admin</option>
              </select>
            </div>
            <button type="submit">Create</button>
            <p role="status">{status}</p>
            {error ? <Problem error={error} /> : null}
          </form>
        </Card>
        <Card title="Users">
          {users.error ? <Problem error={users.error} /> : null}
          {users.data ? (
            <table>
              <THead
                cols={[
                  'Username',
                  'Roles',
                  'State',
                  'Created',
                  <span class="sr-only">Actions</span>,
                ]}
              />
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
