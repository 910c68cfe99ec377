import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { FastifyInstance } from 'fastify';
import { openApiDocument } from '../../src/openapi.ts';

/**
 * Checks every answer of a gateway under test against its own /openapi.json (issue 32): the route
 * and method are documented, the status is one the operation declares, and a JSON body matches
 * the schema declared for that status. Added to every gateway the test harness starts, so the
 * whole gateway test suite checks the document on each `app.inject`; the harness's `close()`
 * fails the test file with the list of answers the document does not describe.
 */
export interface OpenApiCheck {
  violations: string[];
}

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, ResponseDoc> }>>;
};
interface ResponseDoc {
  content?: Record<string, { schema?: unknown }>;
}

const UNTRUSTED_HOST = '"TRAWL_ERR_GATEWAY_UNTRUSTED_HOST"';

/** Paths the document covers: the API, sign-in, health and metrics (not the console's pages). */
const DOCUMENTED = /^\/(api\/|auth\/|health$|metrics$)/;

export function checkAgainstOpenApi(app: FastifyInstance): OpenApiCheck {
  const doc = openApiDocument('test') as unknown as Doc & Record<string, unknown>;
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
  ajv.addSchema({ ...doc, $id: 'openapi' });
  const compiled = new Map<string, ValidateFunction>();
  const check: OpenApiCheck = { violations: [] };

  app.addHook('onSend', async (request, reply, payload) => {
    const route = request.routeOptions.url;
    if (!route || !DOCUMENTED.test(route)) return payload;
    // a 404 of an unknown path has no route of its own
    if (reply.statusCode === 404 && route.includes('*')) return payload;
    const path = route.replace(/:(\w+)/g, '{$1}');
    const method = request.method.toLowerCase();
    const where = `${request.method} ${path}`;
    const op = doc.paths[path]?.[method];
    if (!op) {
      check.violations.push(`${where}: not in /openapi.json`);
      return payload;
    }
    const status = String(reply.statusCode);
    // the Host check answers every route alike, as the document's description says
    if (status === '400' && typeof payload === 'string' && payload.includes(UNTRUSTED_HOST))
      return payload;
    const res = op.responses[status];
    if (!res) {
      check.violations.push(`${where}: answered ${status}, not declared`);
      return payload;
    }
    const type =
      String(reply.getHeader('content-type') ?? '')
        .split(';')[0]
        ?.trim() ?? '';
    const schema = res.content?.[type]?.schema;
    if (!schema || typeof payload !== 'string' || !type.endsWith('json')) return payload;
    const key = `${path} ${method} ${status} ${type}`;
    let validate = compiled.get(key);
    if (!validate) {
      const pointer = `#/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}/${method}/responses/${status}/content/${type.replace('/', '~1')}/schema`;
      validate = ajv.compile({ $ref: `openapi${pointer}` });
      compiled.set(key, validate);
    }
    let body: unknown;
    try {
      body = JSON.parse(payload);
    } catch {
      check.violations.push(`${where} ${status}: not JSON`);
      return payload;
    }
    if (!validate(body)) {
      const e = validate.errors?.[0];
      check.violations.push(
        `${where} ${status}: body does not match the schema (${e?.instancePath || '/'} ${e?.message ?? ''})`,
      );
    }
    return payload;
  });
  return check;
}
