import { readFileSync } from 'node:fs';
import { createCelEnvironment } from '@trawl/workflow-engine';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { fileStamp } from '../shared/file-stamp.ts';
import { RuleFileInvalidError } from './errors.ts';

export const Rule = z.object({
  id: z
    .string()
    .regex(/^[a-z0-9_.-]+$/)
    .max(100),
  description: z.string().max(1000).default(''),
  /** CEL expression over the rule view (`m`); true means the rule matches. */
  expression: z.string().min(1).max(4096),
  /** Log-odds added to the rules analyzer's score when the rule matches (negative lowers it). */
  score: z.number().min(-10).max(10),
  /**
   * Group of symbols restating the same fact (shared/symbols.ts GROUPS: auth, reply_to, sender,
   * pressure, request, brand, deceptive_links, link_hosting, obfuscation, payload, standing, …):
   * the scorer counts the group's symbols together up to its cap. None: counted on its own.
   */
  group: z
    .string()
    .regex(/^[a-z0-9_]+$/)
    .max(64)
    .optional(),
  /** Indicator type raised on a match. */
  indicator: z
    .string()
    .regex(/^[a-z0-9_.-]+$/)
    .max(64)
    .default('rule_match'),
  enabled: z.boolean().default(true),
});
export type Rule = z.output<typeof Rule>;

const RuleFile = z.object({
  version: z.union([z.string(), z.number()]).optional(),
  rules: z.array(Rule).max(5000),
});

export interface CompiledRule extends Rule {
  run: (ctx: Record<string, unknown>) => unknown;
}

let env: ReturnType<typeof createCelEnvironment> | undefined;
/** The CEL environment of rule expressions (made once): the workflow engine's, with linear matches(). */
function celEnvironment(): ReturnType<typeof createCelEnvironment> {
  env ??= createCelEnvironment({ unlistedVariablesAreDyn: true });
  return env;
}

/** Parses and compiles a rule file's text; throws RuleFileInvalidError naming the broken rule. */
export function compileRuleText(text: string, source: string): CompiledRule[] {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new RuleFileInvalidError(
      `${source}: not valid YAML: ${(err as Error).message.split('\n')[0]}`,
      err,
    );
  }
  const parsed = RuleFile.safeParse(doc);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new RuleFileInvalidError(
      `${source}: /${first?.path.join('/') ?? ''} ${first?.message ?? 'invalid'}`,
    );
  }
  const ids = new Set<string>();
  const out: CompiledRule[] = [];
  for (const r of parsed.data.rules) {
    if (ids.has(r.id)) throw new RuleFileInvalidError(`${source}: rule ${r.id} appears twice`);
    ids.add(r.id);
    if (!r.enabled) continue;
    try {
      // matches() runs on V8's linear-time engine; patterns that need backtracking are refused
      const fn = celEnvironment().parse(r.expression);
      out.push({ ...r, run: (ctx) => fn(ctx) });
    } catch (err) {
      throw new RuleFileInvalidError(
        `${source}: rule ${r.id} does not compile: ${(err as Error).message.split('\n')[0]}`,
        err,
      );
    }
  }
  return out;
}

export interface RuleSetState {
  rules: CompiledRule[];
  /** Why the current file was refused (the last good rules stay in force), if it was. */
  error?: string;
  loadedAt?: number;
  path: string;
}

/**
 * A rule file kept up to date: the file's mtime and size are checked at most every `checkEveryMs`;
 * a changed file is recompiled; a broken one keeps the last good rules and reports why.
 */
export class RuleSet {
  private state: RuleSetState;
  private lastCheck = 0;
  private stamp = '';

  constructor(
    readonly path: string,
    private readonly opts: {
      checkEveryMs?: number;
      now?: () => number;
      onError?: (msg: string) => void;
    } = {},
  ) {
    this.state = { rules: [], path };
    this.refresh(true);
  }

  current(): RuleSetState {
    this.refresh(false);
    return this.state;
  }

  private refresh(force: boolean): void {
    const now = (this.opts.now ?? Date.now)();
    if (!force && now - this.lastCheck < (this.opts.checkEveryMs ?? 1000)) return;
    this.lastCheck = now;
    let stamp: string;
    try {
      stamp = fileStamp(this.path);
    } catch (err) {
      this.fail(`rule file ${this.path} cannot be read: ${(err as Error).message}`, 'missing');
      return;
    }
    if (stamp === this.stamp) return;
    try {
      const rules = compileRuleText(readFileSync(this.path, 'utf8'), this.path);
      this.state = { rules, path: this.path, loadedAt: now };
      this.stamp = stamp;
    } catch (err) {
      this.fail((err as Error).message, stamp);
    }
  }

  private fail(msg: string, stamp: string): void {
    if (this.stamp === stamp && this.state.error === msg) return;
    this.stamp = stamp;
    this.state = { ...this.state, error: msg };
    this.opts.onError?.(msg);
  }
}
