import type { ASTNode } from '@marcbachmann/cel-js';
import { editDistance } from '@trawl/contracts';
import { parseCondition } from './cel.ts';

/** Where a name appears in a condition: 1-based line and column inside the expression. */
export interface ConditionPosition {
  /** 0-based offset in the expression. */
  offset: number;
  line: number;
  column: number;
}

/**
 * A stage (and possibly one of its analyzers or providers) a condition names with literal keys:
 * `stages.triage.result...`, `stages.triage.analyzers.urls...`, `stages["triage"]`,
 * `"triage" in stages`. Dynamic keys (`stages[email.language]`) are not references.
 */
export interface ConditionReference {
  stage: string;
  at: ConditionPosition;
  /** The key after the stage name (`result`, `analyzers`, `providers`, or a typo), when given. */
  section?: { name: string; at: ConditionPosition };
  /** The analyzer or provider id after `analyzers.` / `providers.` (only there), when given. */
  id?: { name: string; at: ConditionPosition };
}

/** What the stage holding a condition may refer to. */
export interface ReferenceScope {
  /** Every stage of the workflow, with its analyzer and provider ids. */
  stages: ReadonlyMap<string, { analyzers: readonly string[]; providers: readonly string[] }>;
  /** The stages that have completed whenever this condition runs: the transitive dependencies. */
  upstream: ReadonlySet<string>;
  /** The stage holding the condition. */
  self: string;
}

const SECTIONS = ['result', 'analyzers', 'providers'] as const;
/** Macros that bind a variable: a bound `stages` shadows the workflow's inside them. */
const BINDING_MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

function positionOf(expr: string, offset: number): ConditionPosition {
  const before = expr.slice(0, offset);
  const nl = before.lastIndexOf('\n');
  let line = 1;
  for (const c of before) if (c === '\n') line++;
  return { offset, line, column: offset - nl };
}

function isNode(x: unknown): x is ASTNode {
  return x !== null && typeof x === 'object' && typeof (x as { op?: unknown }).op === 'string';
}

/** A literal key of a selection (`.name`, `.?name`, `["name"]`), with where the key starts. */
function keyOf(n: ASTNode): { target: ASTNode; key: string; offset: number } | undefined {
  if (n.op === '.' || n.op === '.?') {
    const [target, key] = n.args as [ASTNode, string];
    return { target, key, offset: n.end - key.length };
  }
  if (n.op === '[]' || n.op === '[?]') {
    const [target, index] = n.args as [ASTNode, ASTNode];
    if (index.op === 'value' && typeof index.args === 'string') {
      return { target, key: index.args, offset: index.start + 1 };
    }
  }
  return undefined;
}

/** The chain of literal keys selected from the variable `stages` by `n`, outermost last. */
function stagesPath(n: ASTNode): Array<{ key: string; offset: number }> | undefined {
  const keys: Array<{ key: string; offset: number }> = [];
  let cur: ASTNode = n;
  for (;;) {
    const k = keyOf(cur);
    if (k === undefined) break;
    keys.unshift({ key: k.key, offset: k.offset });
    cur = k.target;
  }
  return cur.op === 'id' && cur.args === 'stages' && keys.length > 0 ? keys : undefined;
}

/**
 * Every stage, analyzer and provider a condition names with literal keys. An expression that does
 * not parse has none (its syntax error is reported by checkCondition).
 */
export function conditionReferences(expr: string): ConditionReference[] {
  let ast: ASTNode;
  try {
    ast = parseCondition(expr).ast;
  } catch {
    return [];
  }
  const out: ConditionReference[] = [];
  const seen = new Set<ASTNode>();
  const pos = (offset: number) => positionOf(expr, offset);

  const visit = (n: ASTNode): void => {
    // `"triage" in stages`
    if (n.op === 'in') {
      const [l, r] = n.args as [ASTNode, ASTNode];
      if (r.op === 'id' && r.args === 'stages' && l.op === 'value' && typeof l.args === 'string') {
        out.push({ stage: l.args, at: pos(l.start + 1) });
      }
    }
    if (n.op === 'rcall') {
      const [name, , args] = n.args as [string, ASTNode, ASTNode[]];
      const bound = args[0];
      if (BINDING_MACROS.has(name) && bound?.op === 'id' && bound.args === 'stages') return;
    }
    // The longest selection chain from `stages` is taken once, at its outermost node.
    const keys = seen.has(n) ? undefined : stagesPath(n);
    if (keys) {
      for (let c: ASTNode | undefined = n; c; c = keyOf(c)?.target) seen.add(c);
      const [stage, section, id] = keys;
      if (stage) {
        const ref: ConditionReference = { stage: stage.key, at: pos(stage.offset) };
        if (section) ref.section = { name: section.key, at: pos(section.offset) };
        if (id && (section?.key === 'analyzers' || section?.key === 'providers')) {
          ref.id = { name: id.key, at: pos(id.offset) };
        }
        out.push(ref);
      }
    }
    const walk = (x: unknown): void => {
      if (isNode(x)) visit(x);
      else if (Array.isArray(x)) for (const y of x) walk(y);
    };
    walk(n.args);
  };
  visit(ast);
  return out;
}

function where(p: ConditionPosition): string {
  return `line ${p.line}, column ${p.column}`;
}

function suggest(name: string, known: Iterable<string>): string {
  const list = [...known].sort();
  const close = list.find((k) => editDistance(k, name) <= 2);
  if (close !== undefined) return ` (did you mean "${close}"?)`;
  return list.length > 0 ? ` (known: ${list.slice(0, 20).join(', ')})` : '';
}

/**
 * Problems of the references of one condition: a stage that does not exist, a stage that is not
 * upstream (it may not have run when the condition is evaluated, so the condition would silently be
 * false), a key other than result/analyzers/providers, and an analyzer or provider id that the
 * referenced stage does not have. Each message names the line and column in the expression.
 */
export function checkConditionReferences(expr: string, scope: ReferenceScope): string[] {
  const problems: string[] = [];
  for (const ref of conditionReferences(expr)) {
    const stage = scope.stages.get(ref.stage);
    if (stage === undefined) {
      problems.push(
        `${where(ref.at)}: unknown stage "${ref.stage}"${suggest(ref.stage, scope.stages.keys())}`,
      );
      continue;
    }
    if (ref.stage === scope.self) {
      problems.push(
        `${where(ref.at)}: stage "${ref.stage}" refers to itself; a condition sees only stages completed before it runs`,
      );
      continue;
    }
    if (!scope.upstream.has(ref.stage)) {
      problems.push(
        `${where(ref.at)}: stage "${ref.stage}" is not upstream of stage "${scope.self}" (add it to depends_on); a condition sees only stages completed before it runs`,
      );
      continue;
    }
    if (ref.section === undefined) continue;
    const section = ref.section.name;
    if (!(SECTIONS as readonly string[]).includes(section)) {
      problems.push(
        `${where(ref.section.at)}: stages.${ref.stage} has no "${section}"${suggest(section, SECTIONS)}; use result, analyzers or providers`,
      );
      continue;
    }
    if (ref.id === undefined || section === 'result') continue;
    const ids = section === 'analyzers' ? stage.analyzers : stage.providers;
    if (!ids.includes(ref.id.name)) {
      const what = section === 'analyzers' ? 'analyzer' : 'context provider';
      problems.push(
        `${where(ref.id.at)}: stage "${ref.stage}" has no ${what} "${ref.id.name}"${suggest(ref.id.name, ids)}`,
      );
    }
  }
  return problems;
}
