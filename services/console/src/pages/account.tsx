import { changePassword, session } from '../api.ts';
import { Field, useFormSubmit } from '../components/form.tsx';
import { Card, Page, Problem } from '../components/ui.tsx';

/**
 * Your account (issue 32): change your own password. The gateway ends every session of yours
 * when it changes; this page signs in again at once with the new password.
 */
export function AccountPage() {
  const { error, status, onSubmit } = useFormSubmit();
  const me = session.me;
  return (
    <Page title="Your account">
      <Card title="Change your password">
        <p class="muted">
          Signed in as {me?.username} ({me?.roles.join(', ')}). At least 12 characters; a passphrase
          of a few words is fine. Every other session of yours ends.
        </p>
        <form
          onSubmit={onSubmit(async (f) => {
            const next = String(f.get('new_password') ?? '');
            if (next !== String(f.get('repeat') ?? ''))
              throw new Error('the two new passwords differ');
            await changePassword(String(f.get('current_password') ?? ''), next);
            return 'Password changed.';
          })}
        >
          <Field
            label="Current password"
            name="current_password"
            type="password"
            required
            autocomplete="current-password"
          />
          <Field
            label="New password"
            name="new_password"
            type="password"
            required
            minLength={12}
            autocomplete="new-password"
          />
          <Field
            label="New password again"
            name="repeat"
            type="password"
            required
            autocomplete="new-password"
          />
          <button type="submit">Change password</button>
          <p role="status">{status}</p>
          {error ? <Problem error={error} /> : null}
        </form>
      </Card>
    </Page>
  );
}
