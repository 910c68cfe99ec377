import type { ParseResult } from '@marcbachmann/cel-js';
import { createCelEnvironment } from './cel-matches.ts';

/**
 * The single CEL environment of workflow conditions: variables `email` and `stages`; `matches()`
 * takes a literal pattern and runs on the linear-time RegExp engine (cel-matches.ts).
 */
const env = createCelEnvironment({ unlistedVariablesAreDyn: false })
  .registerVariable('email', 'map')
  .registerVariable('stages', 'map');

/** A compiled condition: evaluates to a boolean; an evaluation error yields `false` with a note. */
export interface CompiledCondition {
  readonly source: string;
  evaluate(vars: { email: unknown; stages: unknown }): { value: boolean; error?: string };
}

function firstLine(e: unknown): string {
  if (e instanceof Error) {
    const s = (e as Error & { summary?: unknown }).summary;
    const text = typeof s === 'string' && s.length > 0 ? s : e.message;
    return text.split('\n')[0] ?? text;
  }
  return String(e);
}

function fullMessage(e: unknown): string {
  return e instanceof Error ? e.message.trimEnd() : String(e);
}

type Compiled = { ok: true; fn: ParseResult } | { ok: false; error: string };

function compile(expr: string): Compiled {
  if (expr.trim().length === 0) return { ok: false, error: 'the condition is empty' };
  let fn: ParseResult;
  try {
    fn = env.parse(expr);
  } catch (e) {
    return { ok: false, error: fullMessage(e) };
  }
  let checked: ReturnType<ParseResult['check']>;
  try {
    checked = fn.check();
  } catch (e) {
    return { ok: false, error: fullMessage(e) };
  }
  if (!checked.valid) {
    return { ok: false, error: fullMessage(checked.error ?? 'the condition does not type-check') };
  }
  if (checked.type !== 'bool' && checked.type !== 'dyn') {
    return {
      ok: false,
      error: `a condition must give a bool, this one gives ${checked.type ?? 'an unknown type'}`,
    };
  }
  return { ok: true, fn };
}

/** Parses `expr` in the conditions' environment (throws on a syntax error); for AST walks. */
export function parseCondition(expr: string): ParseResult {
  return env.parse(expr);
}

/** `undefined` when `expr` compiles as a workflow condition; otherwise the error text. */
export function checkCondition(expr: string): string | undefined {
  const c = compile(expr);
  return c.ok ? undefined : c.error;
}

/** Compiles `expr` or throws an Error whose message is the compiler's text. */
export function compileCondition(expr: string): CompiledCondition {
  const c = compile(expr);
  if (!c.ok) throw new Error(c.error);
  const fn = c.fn;
  return {
    source: expr,
    evaluate(vars) {
      let v: unknown;
      try {
        v = fn(vars);
      } catch (e) {
        return { value: false, error: firstLine(e) };
      }
      if (typeof v === 'boolean') return { value: v };
      return { value: false, error: `the condition gave ${typeof v}, not a bool` };
    },
  };
}
