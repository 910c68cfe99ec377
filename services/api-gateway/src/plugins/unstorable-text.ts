import { BadInputError } from '@trawl/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GATEWAY_ERRORS } from '../errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * JSON pointers into the body (`/email`, or `` for the whole body) whose text is mail content:
     * U+0000 there is what the sender wrote, stored as visible text by the store (ADR 014), not
     * refused. Every other string of a request must hold text the store can keep.
     */
    mailContent?: readonly string[];
  }
}

/** U+0000, or an unpaired surrogate (text PostgreSQL cannot store, as text or as jsonb). */
function isUnstorable(s: string): boolean {
  return s.indexOf('\u0000') !== -1 || !(s as string & { isWellFormed(): boolean }).isWellFormed();
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * The JSON pointer of the first string (member name or value) under `root` that the store cannot
 * hold, or undefined. Iterative (a deeply nested body cannot overflow the stack); subtrees whose
 * pointer is in `skip` are not visited.
 */
function findUnstorable(
  root: unknown,
  base: string,
  skip: ReadonlySet<string> = new Set(),
): string | undefined {
  const stack: [unknown, string][] = [[root, base]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [v, at] = item;
    if (skip.has(at)) continue;
    if (typeof v === 'string') {
      if (isUnstorable(v)) return at;
      continue;
    }
    if (v === null || typeof v !== 'object' || Buffer.isBuffer(v)) continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${at}/${i}`]);
      continue;
    }
    for (const key of Object.keys(v)) {
      const p = `${at}/${escapePointer(key)}`;
      if (isUnstorable(key)) return p;
      stack.push([(v as Record<string, unknown>)[key], p]);
    }
  }
  return undefined;
}

/** A request field holding U+0000 or an unpaired surrogate: 400, naming the field. */
class UnstorableTextError extends BadInputError {
  constructor(pointer: string) {
    super(
      GATEWAY_ERRORS.unstorableText,
      `${pointer} holds U+0000 or an unpaired surrogate, which this field cannot hold`,
      { status: 400, problems: [{ path: pointer, message: 'U+0000 or an unpaired surrogate' }] },
    );
  }
}

function check(request: FastifyRequest): void {
  const skip = new Set((request.routeOptions.config.mailContent ?? []).map((p) => `/body${p}`));
  const at =
    findUnstorable(request.params, '/params') ??
    findUnstorable(request.query, '/query') ??
    findUnstorable(request.body, '/body', skip);
  if (at !== undefined) throw new UnstorableTextError(at);
}

/**
 * Every string a request carries — path parameters, query, JSON and form bodies — is checked once
 * here, after the body is parsed and before any route handler runs (issue 28): one that holds
 * U+0000 or an unpaired surrogate is a 400 problem naming it (`/query/workflow`,
 * `/body/username`), instead of reaching the store, which cannot hold it, and answering 5xx.
 * Mail content (a route's `config.mailContent`) is not refused: the store keeps it as visible text.
 */
export function registerUnstorableTextCheck(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => check(request));
}
