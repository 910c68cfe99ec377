/**
 * How often each symbol fires on each source, and which languages each source is read in: the
 * tables that put a symbol firing on legitimate mail anywhere in plain sight (issue 27).
 */

/** What the tables read of one outcome. */
interface Fired {
  source: string;
  label: 'phishing' | 'ham';
  symbols: string[];
  language?: string;
}

interface SymbolRow {
  symbol: string;
  /** Messages of each source it fired on, in the order of `sources`. */
  fired: number[];
}

export interface SymbolTable {
  /** Sources in order of first appearance, each with its class (the class of most of its mail). */
  sources: { source: string; label: 'phishing' | 'ham'; messages: number }[];
  /** One row per symbol (the scorer's restatements left out), ham-heaviest first. */
  rows: SymbolRow[];
}

/** The per-source firing of every analyzer symbol (not the scorer's, which repeats them). */
export function symbolTable(outs: readonly Fired[]): SymbolTable {
  const index = new Map<string, number>();
  const sources: SymbolTable['sources'] = [];
  const counts = new Map<string, number[]>();
  const labels: { phishing: number; ham: number }[] = [];
  for (const o of outs) {
    let i = index.get(o.source);
    if (i === undefined) {
      i = sources.length;
      index.set(o.source, i);
      sources.push({ source: o.source, label: o.label, messages: 0 });
      labels.push({ phishing: 0, ham: 0 });
    }
    sources[i]!.messages++;
    labels[i]![o.label]++;
    for (const s of new Set(o.symbols)) {
      if (s.startsWith('scorer.')) continue;
      let row = counts.get(s);
      if (!row) {
        row = [];
        counts.set(s, row);
      }
      row[i] = (row[i] ?? 0) + 1;
    }
  }
  for (const [i, s] of sources.entries())
    s.label = labels[i]!.ham > labels[i]!.phishing ? 'ham' : 'phishing';
  const rate = (r: number[], i: number) => (r[i] ?? 0) / Math.max(1, sources[i]!.messages);
  const worstHam = (r: number[]) =>
    Math.max(0, ...sources.map((s, i) => (s.label === 'ham' ? rate(r, i) : 0)));
  const rows = [...counts]
    .map(([symbol, r]) => ({ symbol, fired: sources.map((_, i) => r[i] ?? 0) }))
    .sort(
      (a, b) =>
        worstHam(b.fired) - worstHam(a.fired) ||
        b.fired.reduce((x, y) => x + y, 0) - a.fired.reduce((x, y) => x + y, 0) ||
        a.symbol.localeCompare(b.symbol),
    );
  return { sources, rows };
}

/** A short column name for a source: `corpus/phishing` → `corpus/ph`. */
function columnName(source: string): string {
  const slash = source.lastIndexOf('/');
  if (slash === -1) return source.slice(0, 12);
  return `${source.slice(0, Math.min(slash, 9))}/${source.slice(slash + 1, slash + 3)}`;
}

function percent(n: number, of: number): string {
  if (n === 0) return '.';
  const p = (100 * n) / Math.max(1, of);
  return `${p < 10 ? p.toFixed(1) : p.toFixed(0)}%`;
}

/**
 * The table as text: a column per source (ham sources first), the share of its messages the symbol
 * fired on; rows with the worst ham source first, so what fires on legitimate mail leads.
 */
export function formatSymbolTable(t: SymbolTable): string[] {
  const order = [
    ...t.sources.flatMap((s, i) => (s.label === 'ham' ? [i] : [])),
    ...t.sources.flatMap((s, i) => (s.label === 'phishing' ? [i] : [])),
  ];
  const w = Math.max(6, ...t.rows.map((r) => r.symbol.length));
  const cw = Math.max(9, ...order.map((i) => columnName(t.sources[i]!.source).length));
  const cell = (s: string) => s.padStart(cw);
  const lines = [
    'per symbol (share of each source’s messages it fired on; ham sources first):',
    `  ${'symbol'.padEnd(w)} ${order.map((i) => cell(columnName(t.sources[i]!.source))).join(' ')}`,
    `  ${'(messages)'.padEnd(w)} ${order.map((i) => cell(String(t.sources[i]!.messages))).join(' ')}`,
  ];
  for (const r of t.rows)
    lines.push(
      `  ${r.symbol.padEnd(w)} ${order.map((i) => cell(percent(r.fired[i]!, t.sources[i]!.messages))).join(' ')}`,
    );
  return lines;
}

/** Per source, the share of its messages read in each language (unknown as `?`), largest first. */
export function formatLanguages(outs: readonly Fired[]): string[] {
  const by = new Map<string, Map<string, number>>();
  const total = new Map<string, number>();
  for (const o of outs) {
    let m = by.get(o.source);
    if (!m) {
      m = new Map();
      by.set(o.source, m);
    }
    const lang = o.language || '?';
    m.set(lang, (m.get(lang) ?? 0) + 1);
    total.set(o.source, (total.get(o.source) ?? 0) + 1);
  }
  const w = Math.max(6, ...[...by.keys()].map((s) => s.length));
  const lines = ['languages read, by source:'];
  for (const [source, m] of by) {
    const n = total.get(source) ?? 1;
    const parts = [...m]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([lang, k]) => `${lang} ${percent(k, n)}`);
    lines.push(`  ${source.padEnd(w)}  ${parts.join(', ')}`);
  }
  return lines;
}
