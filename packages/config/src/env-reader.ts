import type { ConfigProblem } from './errors.ts';

export type EnvSource = Readonly<Record<string, string | undefined>>;

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

/**
 * Reads typed values from a merged environment, collecting one problem per bad variable instead of
 * stopping at the first. Empty values count as unset. Messages never quote a secret's value.
 */
export class EnvReader {
  readonly problems: ConfigProblem[] = [];
  private readonly secrets = new Set<string>();

  constructor(private readonly env: EnvSource) {}

  /** Marks variables whose values must never appear in a message. */
  secret(...names: string[]): this {
    for (const n of names) this.secrets.add(n);
    return this;
  }

  problem(variable: string, message: string): void {
    this.problems.push({ variable, path: `/${variable}`, message });
  }

  /** The raw value, or undefined when unset or empty. */
  raw(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v === '' ? undefined : v;
  }

  has(name: string): boolean {
    return this.raw(name) !== undefined;
  }

  /** Quotes a value for a message, unless the variable is secret. */
  show(name: string, value: string): string {
    if (this.secrets.has(name)) return '';
    const v = value.length > 80 ? `${value.slice(0, 77)}...` : value;
    return ` (got ${JSON.stringify(v)})`;
  }

  str(name: string, def: string): string;
  str(name: string): string | undefined;
  str(name: string, def?: string): string | undefined {
    return this.raw(name) ?? def;
  }

  int(name: string, def: number, opts: { min?: number; max?: number } = {}): number {
    const v = this.raw(name);
    if (v === undefined) return def;
    const t = v.trim();
    if (!/^[-+]?\d+$/.test(t) || !Number.isSafeInteger(Number(t))) {
      this.problem(name, `must be an integer${this.show(name, v)}`);
      return def;
    }
    const n = Number(t);
    const { min, max } = opts;
    if ((min !== undefined && n < min) || (max !== undefined && n > max)) {
      const range =
        min !== undefined && max !== undefined
          ? `between ${min} and ${max}`
          : min !== undefined
            ? `at least ${min}`
            : `at most ${max}`;
      this.problem(name, `must be ${range}${this.show(name, v)}`);
      return def;
    }
    return n;
  }

  port(name: string, def: number): number {
    const v = this.raw(name);
    if (v === undefined) return def;
    const t = v.trim();
    const n = Number(t);
    if (!/^\d+$/.test(t) || n < 1 || n > 65535) {
      this.problem(name, `must be a port number between 1 and 65535${this.show(name, v)}`);
      return def;
    }
    return n;
  }

  bool(name: string, def: boolean): boolean {
    const v = this.raw(name);
    if (v === undefined) return def;
    const t = v.trim().toLowerCase();
    if (TRUE.has(t)) return true;
    if (FALSE.has(t)) return false;
    this.problem(name, `must be a boolean (true/false, 1/0, yes/no)${this.show(name, v)}`);
    return def;
  }

  /** One of `allowed`, compared case-insensitively; `aliases` map other spellings. */
  oneOf<T extends string>(
    name: string,
    allowed: readonly T[],
    def: T,
    aliases: Readonly<Record<string, T>> = {},
  ): T {
    const v = this.raw(name);
    if (v === undefined) return def;
    const t = v.trim().toLowerCase();
    const hit = allowed.find((a) => a.toLowerCase() === t) ?? aliases[t];
    if (hit !== undefined) return hit;
    this.problem(name, `must be one of ${allowed.join(', ')}${this.show(name, v)}`);
    return def;
  }

  /** Comma-separated list, trimmed, without empty items. */
  list(name: string, def: readonly string[]): string[] {
    const v = this.raw(name);
    if (v === undefined) return [...def];
    return v
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  }

  /** A URL whose scheme is one of `schemes` (without the colon). */
  url(name: string, schemes: readonly string[], what: string): URL | undefined {
    const v = this.raw(name);
    if (v === undefined) return undefined;
    const u = parseUrl(v.trim());
    if (!u || !schemes.includes(u.protocol.slice(0, -1)) || u.hostname === '') {
      this.problem(name, `must be ${what}${this.show(name, v)}`);
      return undefined;
    }
    return u;
  }
}

function parseUrl(s: string): URL | undefined {
  try {
    return new URL(s);
  } catch {
    return undefined;
  }
}
