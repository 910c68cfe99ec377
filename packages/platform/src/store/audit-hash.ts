import { hash } from 'node:crypto';
import type { AuditRecord } from './repositories.ts';
import { storableText } from './storable-text.ts';

/** The hash a chain starts from (no row before it). */
export const AUDIT_GENESIS_HASH = '0'.repeat(64);

/**
 * What one audit row's hash covers, as stored (strings made storable by `storableText`): the
 * record's content (any JSON as details) and the hash of the row before it.
 */
export type AuditHashInput = Omit<AuditRecord, 'details' | 'prev_hash' | 'hash'> & {
  details: unknown;
  prev_hash: string;
};

/**
 * A JSON value with storable strings and object keys in sorted order: the same value whether it
 * was just built or read back from jsonb (which reorders keys).
 */
export function canonicalJson(v: unknown): unknown {
  if (typeof v === 'string') return storableText(v);
  if (Array.isArray(v)) return v.map((x) => (x === undefined ? null : canonicalJson(x)));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined && typeof x !== 'function') out[storableText(k)] = canonicalJson(x);
    }
    return out;
  }
  return v;
}

/** sha256 (hex) of a row's content and the previous row's hash: a link of the audit chain. */
export function auditRowHash(r: AuditHashInput): string {
  const text = JSON.stringify([
    1,
    r.id,
    r.at,
    r.actor,
    r.action,
    r.target,
    r.outcome,
    r.address,
    r.request_id,
    r.details === null || r.details === undefined ? null : canonicalJson(r.details),
    r.prev_hash,
  ]);
  return hash('sha256', text, 'hex');
}
