import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepJsonText } from '../../src/plugins/json-text.ts';

/** An app whose route echoes the parsed body and the kept text (when it keeps it). */
async function echoApp(keep: boolean): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(async (scoped) => {
    if (keep) keepJsonText(scoped);
    scoped.post('/echo', async (request) => ({
      body: request.body,
      text: keep ? request.jsonText : null,
    }));
  });
  return app;
}

const ACCEPTED = [
  '{"a":1}',
  '\ufeff{"a":[1,{"b":"c"}]}',
  '  [1, 2, "x"] ',
  '"just a string"',
  '12',
  'null',
  '{"constructor":{"name":"ok"}}',
  '{"constructor":"ok","prototype":1}',
  '{"a":"__proto__","b":"constructor"}',
];
const REFUSED = [
  '',
  '{"a":',
  '{"__proto__":{"x":1}}',
  '{"a":{"b":[{"__proto__":{}}]}}',
  '{"\\u005f_proto__":{}}',
  '{"constructor":{"prototype":{"x":1}}}',
  '{"a":[{"constructor":{"prototype":null}}]}',
];

describe('keepJsonText', () => {
  let plain: FastifyInstance;
  let keeping: FastifyInstance;
  beforeAll(async () => {
    plain = await echoApp(false);
    keeping = await echoApp(true);
  });
  afterAll(async () => {
    await plain.close();
    await keeping.close();
  });

  it("answers every body as Fastify's own JSON parser does (values, poisoning, errors)", async () => {
    for (const payload of [...ACCEPTED, ...REFUSED]) {
      const req = {
        method: 'POST' as const,
        url: '/echo',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        payload,
      };
      const [a, b] = await Promise.all([plain.inject(req), keeping.inject(req)]);
      expect(a.statusCode, payload).toBe(REFUSED.includes(payload) ? 400 : 200);
      expect(b.statusCode, payload).toBe(a.statusCode);
      if (a.statusCode === 200) {
        expect(b.json().body, payload).toEqual(a.json().body);
        expect(b.json().text, payload).toBe(payload);
      } else {
        expect(b.json().code, payload).toBe(a.json().code);
        expect(b.json().message, payload).toBe(a.json().message);
      }
    }
  });
});
