import { readFileSync } from 'node:fs';
import { toProblems } from '@trawl/contracts';
import { parse as parseYaml } from 'yaml';
import { csvFields as splitCsvLine } from '../shared/csv.ts';
import { fileStamp } from '../shared/file-stamp.ts';
import { DirectoryFileError } from './errors.ts';
import { Directory } from './model.ts';

/** Splits one CSV line (RFC 4180 quotes), each field trimmed. */
function csvFields(line: string): string[] {
  return splitCsvLine(line).map((f) => f.trim());
}

const TRUE = new Set(['true', 'yes', 'y', '1', 'x', 'vip']);

/**
 * CSV: a header row naming the columns `name,email,title,vip` (title and vip optional); one person
 * per row. Optional `type` column: `person` (default), `internal_domain` or `partner_domain` (the
 * domain in the `email` or `domain` column). Lines starting with `#` are comments.
 */
export function parseDirectoryCsv(text: string): unknown {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const header = csvFields(lines[0] ?? '').map((h) => h.toLowerCase());
  const col = (row: string[], name: string) => {
    const i = header.indexOf(name);
    return i < 0 ? '' : (row[i] ?? '');
  };
  const dir = {
    internal_domains: [] as string[],
    partner_domains: [] as string[],
    people: [] as object[],
  };
  for (const line of lines.slice(1)) {
    const row = csvFields(line);
    const type = col(row, 'type').toLowerCase() || 'person';
    const domain = col(row, 'domain') || col(row, 'email');
    if (type === 'internal_domain') dir.internal_domains.push(domain);
    else if (type === 'partner_domain') dir.partner_domains.push(domain);
    else {
      const aliases = col(row, 'aliases');
      dir.people.push({
        name: col(row, 'name'),
        email: col(row, 'email'),
        title: col(row, 'title'),
        vip: TRUE.has(col(row, 'vip').toLowerCase()),
        aliases: aliases
          ? aliases
              .split(';')
              .map((a) => a.trim())
              .filter(Boolean)
          : [],
      });
    }
  }
  return dir;
}

/** Reads and validates a directory file (`.csv`, else YAML/JSON). Throws DirectoryFileError. */
export function readDirectoryFile(path: string): Directory {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new DirectoryFileError(
      path,
      `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  let raw: unknown;
  try {
    raw = /\.csv$/i.test(path) ? parseDirectoryCsv(text) : parseYaml(text);
  } catch (e) {
    throw new DirectoryFileError(
      path,
      `is not valid ${/\.csv$/i.test(path) ? 'CSV' : 'YAML'}: ${(e as Error).message.split('\n')[0]}`,
    );
  }
  const r = Directory.safeParse(raw ?? {});
  if (!r.success) {
    const problems = toProblems(r.error);
    throw new DirectoryFileError(
      path,
      problems
        .slice(0, 5)
        .map((p) => `${p.path || '/'} ${p.message}`)
        .join('; '),
    );
  }
  return r.data;
}

export interface DirectoryLogger {
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}

/**
 * Keeps a directory file loaded and reloads it when its modification time or size changes
 * (checked at most every `checkIntervalMs`). A broken new version keeps the last good one
 * (logged); with no good version yet, `get` throws.
 */
export class DirectoryFile {
  private current: Directory | undefined;
  private stamp = '';
  private checkedAt = -Infinity;
  lastError: string | undefined;

  constructor(
    readonly path: string,
    private readonly checkIntervalMs = 2000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get(log?: DirectoryLogger): Directory {
    const t = this.now();
    if (this.current !== undefined && t - this.checkedAt < this.checkIntervalMs)
      return this.current;
    this.checkedAt = t;
    let stamp: string;
    try {
      stamp = fileStamp(this.path);
    } catch (e) {
      return this.fail(
        new DirectoryFileError(
          this.path,
          `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
        ),
        log,
      );
    }
    if (this.current !== undefined && stamp === this.stamp) return this.current;
    try {
      const next = readDirectoryFile(this.path);
      const reloaded = this.current !== undefined;
      this.current = next;
      this.stamp = stamp;
      this.lastError = undefined;
      log?.info(
        { path: this.path, people: next.people.length, reloaded },
        reloaded ? 'directory reloaded' : 'directory loaded',
      );
      return next;
    } catch (e) {
      this.stamp = stamp;
      return this.fail(e as DirectoryFileError, log);
    }
  }

  private fail(e: DirectoryFileError, log?: DirectoryLogger): Directory {
    this.lastError = e.message;
    if (this.current === undefined) throw e;
    log?.warn(
      { path: this.path, err: e.message },
      'directory file is broken; keeping the last good version',
    );
    return this.current;
  }
}
