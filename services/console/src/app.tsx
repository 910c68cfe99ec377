import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { can, type Role, restore, session, signOut } from './api.ts';
import { Page } from './components/ui.tsx';
import { AccountPage } from './pages/account.tsx';
import { AuditPage } from './pages/audit.tsx';
import { ConfigPage } from './pages/config.tsx';
import { JobPage } from './pages/job.tsx';
import { JobsPage } from './pages/jobs.tsx';
import { ListsPage } from './pages/lists.tsx';
import { MessagePage } from './pages/message.tsx';
import { OverviewPage } from './pages/overview.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { SubmitPage } from './pages/submit.tsx';
import { UsersPage } from './pages/users.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { WorkflowPage, WorkflowsPage } from './pages/workflows.tsx';
import { Link, match, navigate, useLocation } from './router.tsx';

type Params = Record<string, string>;
interface Route {
  path: string;
  role: Role;
  view: (p: Params) => ComponentChildren;
  /** The page's entry in the main menu, if it has one (in the order of ROUTES). */
  nav?: string;
}

const ROUTES: Route[] = [
  { path: '/', role: 'viewer', view: () => <OverviewPage />, nav: 'Overview' },
  { path: '/jobs', role: 'viewer', view: () => <JobsPage />, nav: 'Jobs' },
  { path: '/jobs/:id', role: 'viewer', view: (p) => <JobPage id={p.id!} /> },
  { path: '/jobs/:id/message', role: 'viewer', view: (p) => <MessagePage id={p.id!} /> },
  { path: '/submit', role: 'analyst', view: () => <SubmitPage />, nav: 'Submit' },
  { path: '/workflows', role: 'viewer', view: () => <WorkflowsPage />, nav: 'Workflows' },
  { path: '/workflows/:id', role: 'viewer', view: (p) => <WorkflowPage id={p.id!} /> },
  { path: '/config', role: 'viewer', view: () => <ConfigPage />, nav: 'Configuration' },
  { path: '/users', role: 'admin', view: () => <UsersPage />, nav: 'Users' },
  { path: '/audit', role: 'admin', view: () => <AuditPage />, nav: 'Audit log' },
  { path: '/webhooks', role: 'admin', view: () => <WebhooksPage />, nav: 'Webhooks' },
  { path: '/lists', role: 'admin', view: () => <ListsPage />, nav: 'Lists' },
  { path: '/account', role: 'viewer', view: () => <AccountPage /> },
];

/** The main menu: the pages with a `nav` label. */
const NAV = ROUTES.flatMap((r) => (r.nav ? [{ href: r.path, label: r.nav, role: r.role }] : []));

function useSession() {
  const [, setN] = useState(0);
  useEffect(() => session.subscribe(() => setN((n) => n + 1)), []);
  return session;
}

export function App() {
  const s = useSession();
  const loc = useLocation();
  useEffect(() => {
    void restore();
  }, []);
  if (!s.restored) {
    return (
      <main id="main" class="centered">
        <p role="status">Loading…</p>
      </main>
    );
  }
  const me = s.me;
  if (!me || loc.path === '/signin') {
    if (me && loc.path === '/signin') {
      navigate(loc.query.get('next') ?? '/', true);
      return null;
    }
    if (loc.path !== '/signin') {
      navigate(`/signin?next=${encodeURIComponent(loc.path + location.search)}`, true);
      return null;
    }
    return <SignInPage next={loc.query.get('next') ?? '/'} />;
  }
  let content: ComponentChildren = (
    <Page title="Not found">
      <p>
        There is no page here. <Link href="/">Go to the overview</Link>.
      </p>
    </Page>
  );
  for (const r of ROUTES) {
    const p = match(r.path, loc.path);
    if (!p) continue;
    content = can(r.role) ? (
      r.view(p)
    ) : (
      <Page title="Not allowed">
        <p role="alert">
          This page needs the {r.role} role; you are signed in as {me.username} (
          {me.roles.join(', ')}
          ).
        </p>
      </Page>
    );
    break;
  }
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <Link href="/" class="brand">
          Trawl
        </Link>
        <nav aria-label="Main">
          <ul>
            {NAV.filter((n) => can(n.role)).map((n) => {
              const active = n.href === '/' ? loc.path === '/' : loc.path.startsWith(n.href);
              return (
                <li key={n.href}>
                  <Link href={n.href} aria-current={active ? 'page' : undefined}>
                    {n.label}
                  </Link>
                </li>
              );
            })}
          </ul>
        </nav>
        <div class="who">
          <Link href="/account" aria-label={`Your account: ${me.username}`}>
            {me.username} <span class="muted">({me.roles.join(', ')})</span>
          </Link>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              void signOut().then(() => navigate('/signin', true));
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {content}
      </main>
    </>
  );
}
