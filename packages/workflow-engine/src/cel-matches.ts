import { setFlagsFromString } from 'node:v8';
import { Environment } from '@marcbachmann/cel-js';

// V8's linear-time RegExp engine (an automaton, no backtracking) runs a RegExp made with the `l`
// flag once this flag is on; it only makes the `l` flag valid and changes nothing else. On Node 20
// it can be turned on at run time. The engine refuses, at construction, what it cannot run in
// linear time (backreferences, lookarounds).
setFlagsFromString('--enable-experimental-regexp-engine');

/** Whether this runtime has the linear-time engine (checked once). */
const LINEAR_ENGINE = (() => {
  try {
    return new RegExp('a', 'l' as string).test('a');
  } catch {
    return false;
  }
})();

/**
 * `pattern` compiled for V8's linear-time engine: its time is linear in the input whatever the
 * pattern and input (no catastrophic backtracking: `(a+)+$` on 100,000 characters takes
 * milliseconds). Throws an Error naming the problem for a pattern that is not a valid JavaScript
 * RegExp, or that needs backtracking (backreferences, lookaheads, lookbehinds).
 */
export function linearRegExp(pattern: string): RegExp {
  if (!LINEAR_ENGINE) {
    throw new Error('matches() needs the linear-time RegExp engine, which this runtime lacks');
  }
  try {
    const linear = new RegExp(pattern, 'l' as string);
    // Without a quantifier a match is at most as long as the pattern, so V8's usual engine is
    // linear in the input too, and several times faster than the experimental linear one (the
    // shipped rules' literal alternations run on every message).
    return hasQuantifier(pattern) ? linear : new RegExp(pattern);
  } catch (e) {
    const msg = (e as Error).message;
    if (/linear time/i.test(msg)) {
      throw new Error(
        `matches() pattern ${JSON.stringify(pattern)} needs backtracking (a backreference or a lookaround), which could take time exponential in the input: refused`,
      );
    }
    throw new Error(`matches() pattern is not a valid regular expression: ${msg}`);
  }
}

/**
 * Whether a pattern has a quantifier (`*`, `+`, `?` after an atom, `{n,m}`) outside character
 * classes and escapes. `(?:` and `(?<name>` are groups, not quantifiers.
 */
export function hasQuantifier(pattern: string): boolean {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '*' || c === '+' || c === '{') return true;
    else if (c === '?' && pattern[i - 1] !== '(') return true;
  }
  return false;
}

/** A marker type: the receiver type of the macro below, so it does not overlap `string.matches`. */
class LinearMatches {}

interface AstNode {
  readonly op: string;
  readonly args: unknown;
}

interface Checker {
  check(node: unknown, ctx: unknown): { kind?: string; type?: string; name?: string };
  getType(name: string): unknown;
  createError(code: string, message: string, ast: unknown): Error;
}

interface Evaluator {
  run(node: unknown, ctx: unknown): unknown;
}

interface MatchesMacro {
  readonly ast: unknown;
  readonly receiver: unknown;
  readonly re: RegExp;
  typeCheck(chk: Checker, macro: MatchesMacro, ctx: unknown): unknown;
  evaluate(ev: Evaluator, macro: MatchesMacro, ctx: unknown): boolean;
}

/**
 * A CEL environment whose `s.matches(pattern)` runs on the linear-time engine. The library's own
 * `matches` makes `new RegExp(pattern)` (backtracking: an admin's `(a+)+$` on 29 characters took
 * 18 s) and cannot be replaced (a second `string.matches` overload is refused as overlapping), so
 * `matches` is taken over by a macro: the parser expands a receiver call `x.matches(...)` through
 * it before any overload is looked at. At parse time the pattern must be a string literal (a
 * pattern read from the message would be chosen by the attacker) and is compiled once for the
 * linear engine (see linearRegExp); the receiver must type-check as a string (or dyn); at run time
 * a receiver that is not a string is an evaluation error, as with the library's `matches`.
 */
export function createCelEnvironment(
  opts: ConstructorParameters<typeof Environment>[0] = {},
): Environment {
  const env = new Environment(opts).registerType('TrawlLinearMatches', LinearMatches);
  env.registerFunction(
    'TrawlLinearMatches.matches(ast): bool',
    ({ ast, args, receiver }: { ast: unknown; args: AstNode[]; receiver: unknown }) => {
      const p = args[0];
      if (p?.op !== 'value' || typeof p.args !== 'string') {
        throw new Error('matches() takes its pattern as a string literal');
      }
      const macro: MatchesMacro = {
        ast,
        receiver,
        re: linearRegExp(p.args),
        typeCheck(chk, m, ctx) {
          const t = chk.check(m.receiver, ctx);
          const name = t.name ?? t.type;
          if (name !== 'string' && name !== 'dyn' && t.kind !== 'dyn') {
            throw chk.createError(
              'no_matching_overload',
              `found no matching overload for '${name}.matches(string)'`,
              m.ast,
            );
          }
          return chk.getType('bool');
        },
        evaluate(ev, m, ctx) {
          const s = ev.run(m.receiver, ctx);
          if (typeof s !== 'string') {
            throw new Error(`matches() needs a string, got ${s === null ? 'null' : typeof s}`);
          }
          m.re.lastIndex = 0;
          return m.re.test(s);
        },
      };
      return macro;
    },
  );
  return env;
}
