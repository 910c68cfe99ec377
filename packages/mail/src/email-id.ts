import { createHash } from 'node:crypto';
import type { Email, EmailInput } from '@trawl/contracts';

function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const keys = Object.keys(value as Record<string, unknown>)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

/**
 * Stable id of a message: `em_` + the first 32 hex digits of the sha256 of a canonical JSON (keys
 * sorted, undefined members left out) of the Email without `analysis_context`. The same Email always
 * gets the same id, whatever the key order it arrived in.
 */
export function emailId(email: Email | EmailInput): string {
  const { analysis_context: _ignored, ...rest } = email as Email;
  return `em_${createHash('sha256').update(canonical(rest)).digest('hex').slice(0, 32)}`;
}
