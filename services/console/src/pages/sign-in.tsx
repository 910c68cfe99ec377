import { useState } from 'preact/hooks';
import { signIn } from '../api.ts';
import { Field } from '../components/form.tsx';
import { Problem } from '../components/ui.tsx';
import { navigate } from '../router.tsx';

export function SignInPage(props: { next: string }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <main id="main" class="centered">
      <form
        class="card signin"
        aria-labelledby="signin-title"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget as HTMLFormElement);
          setBusy(true);
          setError(null);
          signIn(String(f.get('username') ?? ''), String(f.get('password') ?? ''))
            .then(() => navigate(props.next.startsWith('/') ? props.next : '/', true))
            .catch((err: unknown) => setError(err))
            .finally(() => setBusy(false));
        }}
      >
        <h1 id="signin-title">Sign in to Trawl</h1>
        <Field label="Username" name="username" autocomplete="username" required />
        <Field
          label="Password"
          name="password"
          type="password"
          autocomplete="current-password"
          required
        />
        {error ? <Problem error={error} /> : null}
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
