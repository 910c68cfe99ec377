import { useState } from 'preact/hooks';
import { api, can, send } from '../api.ts';
import { THead } from '../components/table.tsx';
import { Card, Loading, Page, Problem, useLoad } from '../components/ui.tsx';
import { Link } from '../router.tsx';

interface Message {
  headers: { name: string; value: string }[];
  text: string | null;
  html: string | null;
  attachments: { name: string; type: string; size: number; sha256: string }[];
}

/**
 * The HTML of a message, in a frame with no privilege at all (sandbox="": no script, no same
 * origin, no forms, no popups) whose own policy forbids every load but inline styles and data:
 * images: a remote image, a tracking pixel, a font or a stylesheet is never fetched.
 */
const FRAME_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";
function frameDocument(html: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${FRAME_CSP}"><meta name="referrer" content="no-referrer"><base target="_blank"></head><body>${html}</body></html>`;
}

export function MessagePage(props: { id: string }) {
  const msg = useLoad(() => api<Message>(`/api/v1/analyze/${props.id}/message`), [props.id]);
  const [dlError, setDlError] = useState<unknown>(null);
  const [tab, setTab] = useState<'html' | 'text'>('html');

  async function download() {
    setDlError(null);
    try {
      const res = await send(`/api/v1/analyze/${props.id}/message/raw`);
      if (!res.ok) throw new Error(`download failed: ${res.status}`);
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement('a');
      a.href = url;
      a.download = `${props.id}.eml`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (e) {
      setDlError(e);
    }
  }

  const m = msg.data;
  return (
    <Page
      title="Message"
      actions={
        <>
          <Link href={`/jobs/${props.id}`}>Back to the job</Link>
          {can('analyst') ? (
            <button type="button" class="secondary" onClick={() => void download()}>
              Download raw (.eml)
            </button>
          ) : null}
        </>
      }
    >
      {dlError ? <Problem error={dlError} /> : null}
      {msg.error ? <Problem error={msg.error} what="The message view" /> : null}
      {!m && msg.loading ? <Loading /> : null}
      {m ? (
        <>
          <Card title="Body">
            <div role="tablist" aria-label="Body part" class="tabs">
              {(['html', 'text'] as const).map((t) => (
                <button
                  key={t}
                  type="button"
                  role="tab"
                  id={`tab-${t}`}
                  aria-selected={tab === t}
                  aria-controls={`panel-${t}`}
                  class={tab === t ? '' : 'secondary'}
                  onClick={() => setTab(t)}
                >
                  {t === 'html' ? 'HTML (sanitized, nothing remote loads)' : 'Text'}
                </button>
              ))}
            </div>
            {tab === 'html' ? (
              <div role="tabpanel" id="panel-html" aria-labelledby="tab-html">
                {m.html ? (
                  <iframe
                    class="mail-frame"
                    title="HTML body of the message (sandboxed)"
                    sandbox=""
                    referrerpolicy="no-referrer"
                    srcdoc={frameDocument(m.html)}
                  />
                ) : (
                  <p>The message has no HTML body.</p>
                )}
              </div>
            ) : (
              <div role="tabpanel" id="panel-text" aria-labelledby="tab-text">
                <pre class="mail-text">{m.text ?? '(no text body)'}</pre>
              </div>
            )}
          </Card>
          <Card title={`Attachments (${m.attachments.length})`}>
            {m.attachments.length === 0 ? (
              <p>No attachment.</p>
            ) : (
              <ul>
                {m.attachments.map((a) => (
                  <li key={a.sha256 + a.name}>
                    {a.name}{' '}
                    <span class="muted">
                      ({a.type}, {a.size} bytes)
                    </span>{' '}
                    <code class="wrap">{a.sha256}</code>
                  </li>
                ))}
              </ul>
            )}
          </Card>
          <Card title="Headers">
            <table class="headers">
              <THead cols={['Name', 'Value']} />
              <tbody>
                {m.headers.map((h, i) => (
                  <tr key={`${i}-${h.name}`}>
                    <th scope="row">{h.name}</th>
                    <td class="wrap">{h.value}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Card>
        </>
      ) : null}
    </Page>
  );
}
