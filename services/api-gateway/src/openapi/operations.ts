/** The OpenAPI document's building blocks: references, problem answers, operations by role. */

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ content: { 'application/json': { schema: ref(name) } } });
const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ref('ProblemDetails') } },
});
/** Any operation: a path, query or body field holding U+0000 or an unpaired surrogate (issue 28). */
const unstorable = problem(
  'a path, query or body field holds U+0000 or an unpaired surrogate ' +
    '(TRAWL_ERR_GATEWAY_UNSTORABLE_TEXT, naming the field)',
);
const std = {
  '400': unstorable,
  '401': problem('missing, invalid or expired credentials'),
  '403': problem('the role does not allow this action'),
  '429': problem('rate limited'),
  '500': problem('an internal error (a bug; logged with its request id)'),
};
/** What any operation with a request body may also answer. */
const withBody = {
  '400': problem('the body is malformed (not JSON, or not the form it says it is)'),
  '413': problem('the body is too large'),
  '415': problem('the body is of a type this operation does not take'),
};

export type Json = Record<string, unknown>;
/** Error responses: a string is the description of a problem+json answer. */
type Errors = Record<string, string | Json>;

export const READERS = 'viewer, analyst, admin, internal key';
export const SUBMITTERS = 'analyst, admin, internal key';
export const ANALYSTS = 'analyst, admin';
export const binary = { schema: { type: 'string', format: 'binary' } };
export const PURGED = 'the body was removed by the retention purge (TRAWL_ERR_MESSAGE_PURGED)';

/** A success response under `status`, with a JSON body of `schemaName` when given. */
export function reply(status: string, description: string, schemaName?: string): Json {
  return { [status]: schemaName ? { description, ...json(schemaName) } : { description } };
}
export const ok = (description: string, schemaName?: string) =>
  reply('200', description, schemaName);
export const body = (schemaName: string) => ({
  requestBody: { required: true, ...json(schemaName) },
});
export const query = (name: string, schema: Json, description?: string) =>
  description ? { name, in: 'query', description, schema } : { name, in: 'query', schema };
export const paging = [
  query('limit', { type: 'integer', minimum: 1, maximum: 200, default: 50 }),
  query('cursor', { type: 'string' }),
];

export function problems(errors: Errors): Json {
  return Object.fromEntries(
    Object.entries(errors).map(([status, e]) => [status, typeof e === 'string' ? problem(e) : e]),
  );
}

/** An authenticated operation: the roles allowed, its success, its own errors, then the rest. */
export function op(
  summary: string,
  roles: string,
  success: Json,
  errors: Errors = {},
  extra: Json = {},
) {
  return {
    summary,
    description: `Allowed: ${roles}.`,
    ...extra,
    responses: {
      ...success,
      ...std,
      ...(extra.requestBody ? withBody : {}),
      ...problems(errors),
    },
  };
}

/** An operation open to anyone (no security requirement). */
export function open(summary: string, responses: Json, extra: Json = {}) {
  return {
    summary,
    security: [],
    ...extra,
    responses: {
      '400': unstorable,
      ...(extra.requestBody ? withBody : {}),
      '500': std['500'],
      ...responses,
    },
  };
}

/** Every `{name}` of a path is a required string parameter, listed before the operation's own. */
export function withPathParams(paths: Record<string, Record<string, Json>>) {
  const out: Record<string, Record<string, Json>> = {};
  for (const [path, operations] of Object.entries(paths)) {
    const inPath = [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    const ops: Record<string, Json> = {};
    for (const [method, operation] of Object.entries(operations)) {
      const { summary, description, parameters, ...rest } = operation;
      const all = [...inPath, ...((parameters as unknown[] | undefined) ?? [])];
      ops[method] = all.length ? { summary, description, parameters: all, ...rest } : operation;
    }
    out[path] = ops;
  }
  return out;
}
