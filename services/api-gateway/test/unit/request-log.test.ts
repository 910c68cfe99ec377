import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { createGatewayLogger } from '../../src/logger.ts';
import { GatewayLogController, registerRequestLogFields } from '../../src/request-log.ts';

describe('GatewayLogController', () => {
  it('writes one request-completed line with the request id and route fields; other lines stay redacted', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger: FastifyBaseLogger = createGatewayLogger('info', {
      write: (s: string) => lines.push(JSON.parse(s)),
    });
    const app: FastifyInstance = Fastify({
      loggerInstance: logger,
      logController: new GatewayLogController(logger),
      requestIdHeader: 'x-request-id',
    });
    registerRequestLogFields(app);
    app.post('/submit', async (request) => {
      request.log.info(
        { password: 'hunter2', auth: { pass: 'p' }, headers: { authorization: 'Bearer t' } },
        'a line with secrets',
      );
      request.logFields = { job_id: 'j-1', email_id: 'em_1', workflow: 'quick' };
      return { ok: true };
    });
    try {
      const r = await app.inject({
        method: 'POST',
        url: '/submit',
        headers: { 'x-request-id': 'req-1' },
        payload: {},
      });
      expect(r.statusCode).toBe(200);
      expect(lines).toHaveLength(2);
      const [secret, completed] = lines;
      expect(secret).toMatchObject({
        request_id: 'req-1',
        password: '[redacted]',
        auth: { pass: '[redacted]' },
        headers: { authorization: '[redacted]' },
      });
      expect(Object.keys(completed ?? {})).toEqual([
        'level',
        'time',
        'service',
        'request_id',
        'method',
        'url',
        'status',
        'response_ms',
        'job_id',
        'email_id',
        'workflow',
        'msg',
      ]);
      expect(completed).toMatchObject({
        level: 30,
        service: 'api-gateway',
        request_id: 'req-1',
        method: 'POST',
        url: '/submit',
        status: 200,
        job_id: 'j-1',
        email_id: 'em_1',
        workflow: 'quick',
        msg: 'request completed',
      });
    } finally {
      await app.close();
    }
  });
});
