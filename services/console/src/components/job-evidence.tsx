import { Fragment } from 'preact';
import { Link } from '../router.tsx';
import type { Evidence } from '../types.ts';
import { TableCard } from './table.tsx';
import { Card } from './ui.tsx';

// The job page's evidence: what each analyzer found.

export function EvidenceView(props: { e: Evidence }) {
  const { e } = props;
  return (
    <>
      <div class="grid">
        <Card title="Message">
          <dl class="facts">
            <dt>Subject</dt>
            <dd>{e.message.subject}</dd>
            <dt>From</dt>
            <dd>
              {e.message.from.display_name ? `${e.message.from.display_name} ` : ''}&lt;
              {e.message.from.address}&gt;
            </dd>
            {e.message.reply_to.length ? (
              <>
                <dt>Reply-To</dt>
                <dd>{e.message.reply_to.join(', ')}</dd>
              </>
            ) : null}
            {e.message.return_path ? (
              <>
                <dt>Return-Path</dt>
                <dd>{e.message.return_path}</dd>
              </>
            ) : null}
            <dt>To</dt>
            <dd>{[...e.message.to, ...e.message.cc].join(', ') || '—'}</dd>
            <dt>Date</dt>
            <dd>{e.message.date}</dd>
          </dl>
        </Card>
        <Card title="Authentication">
          <dl class="facts">
            {(['spf', 'dkim', 'dmarc', 'arc'] as const).map((k) => (
              <Fragment key={k}>
                <dt key={`${k}-t`}>{k.toUpperCase()}</dt>
                <dd key={`${k}-d`}>
                  <span class={`auth auth-${e.auth[k]}`}>{e.auth[k]}</span>
                </dd>
              </Fragment>
            ))}
            <dt>Recorded by</dt>
            <dd>
              {e.auth.authserv_id || '—'} {e.auth.verified ? '(trusted)' : '(not verified)'}
            </dd>
          </dl>
        </Card>
        {e.lists?.length ? (
          <Card title="Allow and block lists">
            <ul class="list-matches">
              {e.lists.map((m) => (
                <li key={`${m.entry_id}-${m.matched}`}>
                  <span class={`badge badge-${m.list}`}>{m.list}</span> {m.kind.replace('_', ' ')}{' '}
                  <code>{m.value}</code> matched {m.matched}
                  {m.note ? <span class="muted"> ({m.note})</span> : null}
                  {m.counted ? null : <p class="muted">not counted: {m.reason}</p>}
                </li>
              ))}
            </ul>
          </Card>
        ) : null}
        <Card title="Received path">
          {e.received.sending_ip ? <p>Sending address: {e.received.sending_ip}</p> : null}
          {e.received.hops.length === 0 ? (
            <p>No Received header.</p>
          ) : (
            <ol class="hops">
              {e.received.hops.map((h, i) => (
                <li key={`${i}-${h.by}`}>
                  from {h.from ?? '?'} {h.ip ? `[${h.ip}]` : ''} by {h.by ?? '?'}{' '}
                  <span class="muted">{h.date ?? ''}</span>
                </li>
              ))}
            </ol>
          )}
        </Card>
      </div>
      <TableCard
        title="URLs"
        id="card-urls"
        items={e.urls}
        empty="No URL."
        cols={['URL', 'Shown as', 'Where']}
        row={(u, i) => (
          <tr key={`${i}-${u.url}`}>
            <td class="wrap">
              <code>{u.decoded}</code>
              {u.hidden ? <span class="badge badge-phish">hidden</span> : null}
            </td>
            <td>{u.text ?? ''}</td>
            <td>
              {u.source
                ? `in ${u.attachment_name ?? 'an attachment'} (${u.source === 'qr' ? 'QR code' : u.source})`
                : `${u.found_in} (${u.element})`}
            </td>
          </tr>
        )}
      />
      <TableCard
        title="Attachments"
        id="card-attachments"
        items={e.attachments}
        empty="No attachment."
        cols={['Name', 'Type', 'Size', 'SHA-256']}
        row={(a, i) => (
          <tr key={`${i}-${a.filename}`}>
            <td>{a.filename}</td>
            <td>
              {a.declared_type}
              {a.sniffed_type && a.sniffed_type !== a.declared_type
                ? ` (is ${a.sniffed_type})`
                : ''}
              {a.findings?.length ? ` · ${a.findings.join(', ')}` : ''}
            </td>
            <td>{a.size ?? '—'}</td>
            <td class="wrap">
              {a.sha256 ? <Link href={`/jobs?sha256=${a.sha256}`}>{a.sha256}</Link> : '—'}
            </td>
          </tr>
        )}
      />
    </>
  );
}
