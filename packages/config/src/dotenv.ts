/**
 * A small `.env` parser: `KEY=value` lines, `export ` prefix, `#` comments (whole-line, or after an
 * unquoted value when preceded by whitespace), single quotes (literal), double quotes (with `\n`,
 * `\r`, `\t`, `\"`, `\\` escapes, may span lines), backquotes (literal). Later keys win.
 * Lines that are not assignments are reported in `invalidLines` (1-based) and otherwise ignored.
 */
export interface DotenvResult {
  values: Record<string, string>;
  invalidLines: number[];
}

const KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** Parses a .env file's text into its variables, with the lines it could not read. */
export function parseDotenv(text: string): DotenvResult {
  const values: Record<string, string> = {};
  const invalidLines: number[] = [];
  const src = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const lines = src.split('\n');
  let i = 0;
  while (i < lines.length) {
    const lineNo = i + 1;
    let line = lines[i] ?? '';
    i++;
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    line = trimmed.replace(/^export\s+/, '');
    const eq = line.indexOf('=');
    if (eq <= 0) {
      invalidLines.push(lineNo);
      continue;
    }
    const key = line.slice(0, eq).trim();
    if (!KEY.test(key)) {
      invalidLines.push(lineNo);
      continue;
    }
    let rest = line.slice(eq + 1).trimStart();
    const quote = rest[0];
    if (quote === '"' || quote === "'" || quote === '`') {
      // Find the closing quote, possibly on a later line.
      let body = rest.slice(1);
      let end = findClosing(body, quote);
      while (end < 0 && i < lines.length) {
        body += `\n${lines[i] ?? ''}`;
        i++;
        end = findClosing(body, quote);
      }
      if (end < 0) {
        invalidLines.push(lineNo);
        continue;
      }
      const raw = body.slice(0, end);
      values[key] = quote === '"' ? unescapeDouble(raw) : raw;
      continue;
    }
    // Unquoted: strip an inline comment (` #...`) and surrounding whitespace.
    const hash = rest.search(/\s#/);
    if (hash >= 0) rest = rest.slice(0, hash);
    values[key] = rest.trim();
  }
  return { values, invalidLines };
}

function findClosing(body: string, quote: string): number {
  for (let j = 0; j < body.length; j++) {
    const c = body[j];
    if (quote === '"' && c === '\\') {
      j++;
      continue;
    }
    if (c === quote) return j;
  }
  return -1;
}

function unescapeDouble(raw: string): string {
  return raw.replace(/\\([nrt"\\$])/g, (_m, c: string) => {
    switch (c) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      default:
        return c;
    }
  });
}
