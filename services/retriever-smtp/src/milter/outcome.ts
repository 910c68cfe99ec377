import { fieldName, oneLineValue, valueLines } from '../header-lines.ts';
import type { Decision } from '../policy.ts';
import { claimsAuthservId } from '../verify-auth.ts';
import type { MilterMessage, MilterModification, MilterOutcome } from './session.ts';

const TRAWL_PREFIX = 'x-trawl-';

/**
 * The fields a sender must not be able to write, as the content filter removes them
 * (headers.ts, inline-auth.ts): every `X-Trawl-*`, and every `Authentication-Results` claiming
 * Trawl's authserv-id (forged: RFC 8601 section 5).
 */
function forbidden(name: string, value: string, authservId: string | undefined): boolean {
  const n = name.trim().toLowerCase();
  if (n.startsWith(TRAWL_PREFIX)) return true;
  return (
    authservId !== undefined &&
    n === 'authentication-results' &&
    claimsAuthservId(value, authservId)
  );
}

/**
 * A value that hides a line break a mail server would read as the start of a field (a bare CR or
 * LF followed by anything but a space or tab: issue 28), written so it no longer can: a hidden
 * forbidden field is dropped, any other hidden line becomes a continuation line. Undefined when
 * the value hides nothing (left as it is).
 */
function safeValue(value: string, authservId: string | undefined): string | undefined {
  const lines = valueLines(value);
  if (lines.length === 1) return undefined;
  let hidden = false;
  const kept: string[] = [lines[0] as string];
  for (const l of lines.slice(1)) {
    if (l.startsWith(' ') || l.startsWith('\t')) {
      kept.push(l);
      continue;
    }
    hidden = true;
    const name = fieldName(Buffer.from(l, 'latin1'));
    const colon = l.indexOf(':');
    if (name !== '' && forbidden(name, l.slice(colon + 1), authservId)) continue;
    if (l.trim() !== '') kept.push(` ${l}`);
  }
  // Postfix writes LF in a value as a folded line (and a continuation must start with white space)
  return hidden ? kept.join('\n') : undefined;
}

export interface OutcomeOptions {
  /** Trawl's authserv-id when it verifies authentication (its forged fields are removed). */
  authservId?: string | undefined;
  /** Trawl's own Authentication-Results value, written on top. */
  authResults?: string | undefined;
  /** Why a quarantined message is held (Postfix's hold queue shows it). */
  quarantineReason?: string | undefined;
}

/**
 * What the milter sends Postfix for the policy's decision (policy.ts), the same decision the
 * content filter carries out by re-injection: a 4xx or 5xx answer, or the message accepted with
 * the sender's X-Trawl-* (and forged Authentication-Results) fields removed, Trawl's tags added,
 * the Subject prefixed, or the message held in Postfix's quarantine (hold queue).
 */
export function milterOutcome(
  decision: Decision,
  m: Pick<MilterMessage, 'headers'>,
  o: OutcomeOptions = {},
): MilterOutcome {
  if (decision.kind === 'tempfail') {
    return { modifications: [], final: { kind: 'reply', text: `451 ${decision.message}` } };
  }
  if (decision.kind === 'reject') {
    return { modifications: [], final: { kind: 'reply', text: `550 ${decision.message}` } };
  }
  const mods: MilterModification[] = [];
  const seen = new Map<string, number>();
  const deletions: { name: string; index: number }[] = [];
  let subject: { index: number; value: string } | undefined;
  for (const h of m.headers) {
    const key = h.name.trim().toLowerCase();
    const index = (seen.get(key) ?? 0) + 1;
    seen.set(key, index);
    if (forbidden(h.name, h.value, o.authservId)) {
      deletions.push({ name: h.name, index });
      continue;
    }
    const safe = safeValue(h.value, o.authservId);
    if (safe !== undefined) mods.push({ kind: 'chgHeader', name: h.name, index, value: safe });
    if (key === 'subject' && !subject) subject = { index, value: safe ?? h.value };
  }
  // last first: a deletion never moves the position of one still to come
  for (const d of deletions.reverse()) {
    mods.push({ kind: 'chgHeader', name: d.name, index: d.index, value: '' });
  }
  if (o.authResults !== undefined) {
    mods.push({
      kind: 'insHeader',
      index: 0,
      name: 'Authentication-Results',
      value: o.authResults,
    });
  }
  for (const [name, value] of decision.headers) {
    mods.push({ kind: 'addHeader', name, value: oneLineValue(value) });
  }
  if (decision.subjectPrefix !== undefined) {
    const prefix = oneLineValue(decision.subjectPrefix);
    if (!subject) mods.push({ kind: 'addHeader', name: 'Subject', value: prefix });
    else if (!subject.value.trimStart().startsWith(prefix)) {
      mods.push({
        kind: 'chgHeader',
        name: 'Subject',
        index: subject.index,
        value: `${prefix} ${subject.value.trimStart()}`,
      });
    }
  }
  if (decision.action === 'quarantine') {
    mods.push({ kind: 'quarantine', reason: o.quarantineReason ?? 'Trawl: quarantined' });
  }
  return { modifications: mods, final: { kind: 'continue' } };
}
