/**
 * Estimates the multipart nesting depth of a raw message without parsing it: follows the boundaries
 * declared by `Content-Type: multipart/...; boundary=...` headers and the delimiter lines that open and
 * close them. Stops as soon as `limit` is exceeded. Linear in the message size.
 */
export function multipartDepth(raw: Buffer, limit: number): number {
  const text = raw.toString('latin1');
  const stack: string[] = [];
  let max = 0;
  const ctRe = /^content-type:[ \t]*multipart\/[^\r\n]*(?:\r?\n[ \t][^\r\n]*)*/gim;
  // Collect multipart declarations with their offsets, then walk delimiter lines in order.
  const decls: { at: number; boundary: string }[] = [];
  for (let m = ctRe.exec(text); m !== null; m = ctRe.exec(text)) {
    const b = /boundary\s*=\s*(?:"([^"]{1,200})"|([^\s;]{1,200}))/i.exec(m[0]);
    const boundary = b?.[1] ?? b?.[2];
    if (boundary !== undefined) decls.push({ at: m.index, boundary });
    if (decls.length > 100_000) break;
  }
  if (decls.length <= 1) return decls.length;
  const delimRe = /^--([^\r\n]{1,204})$/gm;
  let d = 0;
  const events: { at: number; kind: 'decl' | 'delim'; value: string }[] = [];
  for (let m = delimRe.exec(text); m !== null; m = delimRe.exec(text)) {
    while (d < decls.length && (decls[d] as { at: number }).at < m.index) {
      const decl = decls[d] as { at: number; boundary: string };
      events.push({ at: decl.at, kind: 'decl', value: decl.boundary });
      d++;
    }
    events.push({ at: m.index, kind: 'delim', value: (m[1] as string).trimEnd() });
  }
  for (; d < decls.length; d++) {
    const decl = decls[d] as { at: number; boundary: string };
    events.push({ at: decl.at, kind: 'decl', value: decl.boundary });
  }
  for (const e of events) {
    if (e.kind === 'decl') {
      stack.push(e.value);
      if (stack.length > max) max = stack.length;
      if (max > limit) return max;
      continue;
    }
    const closing = e.value.endsWith('--');
    const name = closing ? e.value.slice(0, -2) : e.value;
    const i = stack.lastIndexOf(name);
    if (i < 0) continue;
    stack.length = closing ? i : i + 1;
  }
  return max;
}

const T_SLASH = [Buffer.from('t/'), Buffer.from('T/')];

/**
 * `multipartDepth(raw, limit) > limit`, answered without the scan when it cannot be true: every
 * declaration the scan counts holds `multipart/`, so a `t/` or `T/` of its own, and the depth never
 * exceeds the number of declarations. Most messages hold a handful of `t/`, far below any limit.
 */
export function multipartDeeperThan(raw: Buffer, limit: number): boolean {
  let candidates = 0;
  for (const needle of T_SLASH) {
    for (let i = raw.indexOf(needle); i >= 0; i = raw.indexOf(needle, i + 2)) {
      if (++candidates > limit) return multipartDepth(raw, limit) > limit;
    }
  }
  return false;
}
