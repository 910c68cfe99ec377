import type { Evidence, Indicator, Job, Trace } from '../types.ts';
import { THead } from './table.tsx';
import { ms, pct, Verdict } from './ui.tsx';

// The job page's trace timeline and score breakdown.

export function Timeline(props: { trace: Trace }) {
  const total = Math.max(1, props.trace.duration_ms);
  return (
    <ol class="timeline">
      {props.trace.stages.map((s) => {
        const start = s.started_at_ms ?? 0;
        return (
          <li key={s.name} class={`stage stage-${s.status}`}>
            <div class="stage-head">
              <strong>{s.name}</strong> <span class={`badge badge-${s.status}`}>{s.status}</span>{' '}
              <span class="muted">
                {ms(s.duration_ms)}
                {s.started_at_ms !== undefined ? ` from +${ms(start)}` : ''}
                {s.result ? `, p = ${s.result.probability.toFixed(2)}` : ''}
              </span>
            </div>
            <svg class="bar" viewBox="0 0 1000 8" preserveAspectRatio="none" aria-hidden="true">
              <rect
                x={(start / total) * 1000}
                y="0"
                width={Math.max(2, (s.duration_ms / total) * 1000)}
                height="8"
              />
            </svg>
            {s.error ? <p class="error-text">{s.error}</p> : null}
            {s.reason ? <p class="muted">skipped: {s.reason}</p> : null}
            {s.condition ? (
              <p class="muted">
                condition <code>{s.condition}</code>
              </p>
            ) : null}
            {s.analyzers.length + s.providers.length > 0 ? (
              <table class="calls">
                <THead cols={['Call', 'Status', 'Attempts', 'Duration', 'Error']} />
                <tbody>
                  {[...s.providers, ...s.analyzers].map((c) => (
                    <tr key={c.id}>
                      <td>{c.id}</td>
                      <td>
                        {c.status}
                        {c.cached ? ' (cached)' : ''}
                      </td>
                      <td>{c.attempts}</td>
                      <td>{ms(c.duration_ms)}</td>
                      <td>{c.error ?? ''}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : null}
          </li>
        );
      })}
    </ol>
  );
}

const signed = (n: number) => `${n > 0 ? '+' : n < 0 ? '−' : ''}${Math.abs(n).toFixed(2)}`;

/** The scorer's log-odds by group (its cap applied) and by symbol. */
function SymbolScore(props: { score: NonNullable<Evidence['score']> }) {
  const s = props.score;
  const byGroup = new Map<string, { symbol: string; weight: number }[]>();
  for (const c of s.contributions) {
    const g = c.group ?? '(no group)';
    byGroup.set(g, [...(byGroup.get(g) ?? []), c]);
  }
  return (
    <table>
      <caption>
        Score by group and symbol ({s.by}): bias {signed(s.bias)}, log-odds {signed(s.log_odds)},
        probability {s.probability.toFixed(3)}
      </caption>
      <THead cols={['Group', 'Counted (after its cap)', 'Symbol', 'Log-odds']} />
      <tbody>
        {[...byGroup].flatMap(([g, list]) =>
          list.map((c, n) => (
            <tr key={`${g}-${c.symbol}`}>
              <td>{n === 0 ? g : ''}</td>
              <td>
                {n === 0 && s.groups[g]
                  ? `${signed(s.groups[g].counted)} of ${signed(s.groups[g].sum)}`
                  : ''}
              </td>
              <td>
                <code>{c.symbol}</code>
              </td>
              <td>{signed(c.weight)}</td>
            </tr>
          )),
        )}
      </tbody>
    </table>
  );
}

/** The indicators of the verdict by what they are about (group) and type (symbol). */
export function Score(props: { job: Job }) {
  const r = props.job.result!;
  const groups = new Map<string, Indicator[]>();
  for (const i of r.indicators) {
    const g = i.evidence?.kind ?? 'other';
    groups.set(g, [...(groups.get(g) ?? []), i]);
  }
  const stages = props.job.trace?.stages.filter((s) => s.result) ?? [];
  const score = r.evidence?.score;
  return (
    <>
      {score ? <SymbolScore score={score} /> : null}
      {stages.length > 0 ? (
        <table>
          <caption>Probability of phishing by stage</caption>
          <THead cols={['Stage', 'Probability', 'Verdict']} />
          <tbody>
            {stages.map((s) => (
              <tr key={s.name}>
                <td>{s.name}</td>
                <td>{s.result!.probability.toFixed(3)}</td>
                <td>
                  <Verdict phishing={s.result!.is_phishing} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {r.indicators.length === 0 ? (
        <p>No indicator.</p>
      ) : (
        <table>
          <caption>Indicators by group and symbol</caption>
          <THead cols={['Group', 'Symbol', 'Confidence', 'Detail']} />
          <tbody>
            {[...groups].flatMap(([g, list]) =>
              list.map((i, n) => (
                <tr key={`${g}-${i.type}-${i.value}`}>
                  <td>{n === 0 ? g : ''}</td>
                  <td>
                    <code>{i.type}</code>
                  </td>
                  <td>{pct(i.confidence)}</td>
                  <td>{i.value}</td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      )}
    </>
  );
}
