import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { importVia, ROOT } from './helpers.ts';

/**
 * docker/prometheus/alerts.yml and docker/grafana/trawl.json are read the way Prometheus and Grafana
 * would: the rules file's structure (groups, alert, expr, for, labels, annotations), each expression
 * checked as PromQL (brackets, strings, durations, functions) and every metric it names exported by
 * Trawl's code (no promtool here: this is the equivalent parser).
 */

const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');

/** Every metric name Trawl's code registers (`name: 'trawl_…'`, `counter('trawl_…'`), with histogram series. */
function exportedMetrics(): Set<string> {
  const out = new Set<string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir)) {
      if (e === 'node_modules' || e === 'test') continue;
      const p = join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) {
        const text = readFileSync(p, 'utf8');
        // `new Counter({ name: 'trawl_…'` or a service's small builder, `counter('trawl_…'`
        for (const m of text.matchAll(
          /(?:new (Counter|Gauge|Histogram)\(\{\s*name: |\b(counter|gauge|histogram)\(\s*)'(trawl_[a-z0-9_]+)'/g,
        )) {
          const name = m[3] as string;
          out.add(name);
          if ((m[1] ?? m[2]) === 'Histogram' || m[2] === 'histogram')
            for (const s of ['_bucket', '_count', '_sum']) out.add(name + s);
        }
      }
    }
  };
  for (const top of ['packages', 'services'])
    for (const pkg of readdirSync(join(ROOT, top))) {
      const src = join(ROOT, top, pkg, 'src');
      try {
        if (statSync(src).isDirectory()) walk(src);
      } catch {
        // no src folder
      }
    }
  return out;
}

const FUNCTIONS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'count',
  'topk',
  'bottomk',
  'quantile',
  'stddev',
  'rate',
  'irate',
  'increase',
  'delta',
  'deriv',
  'histogram_quantile',
  'clamp_min',
  'clamp_max',
  'abs',
  'absent',
  'absent_over_time',
  'max_over_time',
  'min_over_time',
  'avg_over_time',
  'changes',
  'resets',
  'time',
  'vector',
  'scalar',
  'round',
  'ceil',
  'floor',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
]);

/**
 * The metric names of a PromQL expression; throws on what Prometheus would refuse: unbalanced
 * brackets, an unterminated string, a bad duration, an unknown function or keyword.
 */
function promqlMetrics(expr: string, builtin: Set<string>): string[] {
  // Strings first (they may hold anything).
  let s = '';
  for (let i = 0; i < expr.length; i++) {
    const c = expr[i] as string;
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < expr.length && expr[j] !== c) j += expr[j] === '\\' ? 2 : 1;
      if (j >= expr.length) throw new Error(`unterminated string in ${expr}`);
      s += '""';
      i = j;
    } else s += c;
  }
  const stack: string[] = [];
  const pairs: Record<string, string> = { ')': '(', ']': '[', '}': '{' };
  for (const c of s) {
    if (c === '(' || c === '[' || c === '{') stack.push(c);
    else if (c in pairs && stack.pop() !== pairs[c]) throw new Error(`unbalanced ${c} in ${expr}`);
  }
  if (stack.length > 0) throw new Error(`unclosed ${stack.join('')} in ${expr}`);
  // Label matchers: `name op ""` pairs.
  for (const m of s.matchAll(/\{([^}]*)\}/g)) {
    for (const part of (m[1] as string).split(',').filter((p) => p.trim() !== '')) {
      if (!/^\s*[a-zA-Z_][a-zA-Z0-9_]*\s*(=~|!~|!=|=)\s*""\s*$/.test(part))
        throw new Error(`bad label matcher ${part} in ${expr}`);
    }
  }
  // Ranges: [5m], [$__rate_interval] (Grafana).
  for (const m of s.matchAll(/\[([^\]]*)\]/g)) {
    if (!/^(\d+(ms|s|m|h|d|w|y))+$|^\$__rate_interval$|^\$__range$/.test(m[1] as string))
      throw new Error(`bad range [${m[1]}] in ${expr}`);
  }
  const bare = s
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names: string[] = [];
  for (const m of bare.matchAll(/(?<![0-9.$])\b[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const id = m[0];
    if (FUNCTIONS.has(id)) continue;
    if (id.startsWith('trawl_') || builtin.has(id)) names.push(id);
    else throw new Error(`unknown function or metric ${id} in ${expr}`);
  }
  return names;
}

interface Rule {
  alert?: string;
  expr?: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

let parseYaml: (t: string) => unknown;
let exported: Set<string>;
beforeAll(async () => {
  ({ parse: parseYaml } = await importVia<{ parse: (t: string) => unknown }>(
    'packages/cli',
    'yaml',
  ));
  exported = exportedMetrics();
});

describe('docker/prometheus/alerts.yml', () => {
  it('is a valid rules file whose expressions name only metrics Trawl exports', () => {
    const doc = parseYaml(read('docker/prometheus/alerts.yml')) as {
      groups: { name: string; rules: Rule[] }[];
    };
    expect(doc.groups.length).toBeGreaterThan(0);
    const alerts = new Set<string>();
    const used = new Set<string>();
    for (const g of doc.groups) {
      expect(g.name).toMatch(/\S/);
      for (const r of g.rules) {
        expect(r.alert, JSON.stringify(r)).toMatch(/^[A-Za-z][A-Za-z0-9]*$/);
        expect(alerts.has(r.alert as string), `${r.alert} twice`).toBe(false);
        alerts.add(r.alert as string);
        expect(r.for ?? '5m', r.alert).toMatch(/^(\d+(ms|s|m|h|d|w|y))+$/);
        expect(['warning', 'critical'], r.alert).toContain(r.labels?.severity);
        expect(r.annotations?.summary, r.alert).toMatch(/\S/);
        const names = promqlMetrics(r.expr as string, new Set(['up']));
        expect(names.length, `${r.alert} names a metric`).toBeGreaterThan(0);
        for (const n of names) {
          if (n !== 'up') expect(exported.has(n), `${r.alert}: ${n} is exported`).toBe(true);
          used.add(n.replace(/_(bucket|count|sum)$/, ''));
        }
      }
    }
    // What issue 19 asks an operator to see is alerted on.
    for (const m of [
      'trawl_jobs_total',
      'trawl_job_duration_seconds',
      'trawl_analyzer_errors_total',
      'trawl_queue_depth',
      'trawl_mail_retriever_backlog',
    ])
      expect(used.has(m), m).toBe(true);
  });

  it('the PromQL check refuses what Prometheus would', () => {
    const b = new Set(['up']);
    expect(() => promqlMetrics('sum(rate(trawl_jobs_total[5m])', b)).toThrow(/unclosed/);
    expect(() => promqlMetrics('rate(trawl_jobs_total[5 m])', b)).toThrow(/bad range/);
    expect(() => promqlMetrics('sumx(trawl_jobs_total)', b)).toThrow(/unknown/);
    expect(() => promqlMetrics('trawl_jobs_total{status="x}', b)).toThrow(/unterminated/);
    expect(promqlMetrics('sum by (le) (rate(trawl_x_bucket[5m])) > 1e-9', b)).toEqual([
      'trawl_x_bucket',
    ]);
  });
});

describe('docker/grafana/trawl.json', () => {
  it('is a dashboard whose every query names only metrics Trawl exports', () => {
    const dash = JSON.parse(read('docker/grafana/trawl.json')) as {
      title: string;
      uid: string;
      panels: { type: string; title: string; targets?: { expr: string }[] }[];
    };
    expect(dash.title).toBe('Trawl');
    const graphs = dash.panels.filter((p) => p.type !== 'row');
    expect(graphs.length).toBeGreaterThan(8);
    const used = new Set<string>();
    for (const p of graphs) {
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets ?? []) {
        for (const n of promqlMetrics(t.expr, new Set())) {
          expect(exported.has(n), `${p.title}: ${n} is exported`).toBe(true);
          used.add(n.replace(/_(bucket|count|sum)$/, ''));
        }
      }
    }
    for (const m of [
      'trawl_jobs_total',
      'trawl_job_verdicts_total',
      'trawl_job_duration_seconds',
      'trawl_stage_duration_seconds',
      'trawl_analyzer_errors_total',
      'trawl_queue_depth',
      'trawl_mail_retriever_backlog',
    ])
      expect(used.has(m), m).toBe(true);
  });
});
