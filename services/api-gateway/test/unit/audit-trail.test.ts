import type { AuditEntry, Store } from '@trawl/platform';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createAuditTrail } from '../../src/audit-trail.ts';

function fakeStore(rows: AuditEntry[]): Store {
  return {
    audit: {
      async append(e: AuditEntry) {
        rows.push(e);
        return { id: String(rows.length), hash: 'h' };
      },
    },
  } as unknown as Store;
}

const req = (ip: string, id = 'r1') => ({ ip, id }) as unknown as FastifyRequest;

describe('audit trail: failed logins aggregated per source', () => {
  it('writes one row per source per window, with the count, whatever the number of failures', async () => {
    const rows: AuditEntry[] = [];
    const trail = createAuditTrail({
      store: fakeStore(rows),
      logger: pino({ level: 'silent' }) as FastifyBaseLogger,
      now: () => new Date('2024-05-01T10:00:00Z'),
      failureWindowSeconds: 60,
      retentionDays: 0,
    });
    for (let i = 0; i < 10_000; i++) {
      trail.failure(req('192.0.2.1'), {
        action: 'auth.login',
        username: `user${i % 20}`,
        reason: i % 2 ? 'wrong_password' : 'unknown_user',
      });
    }
    trail.failure(req('192.0.2.2'), { action: 'auth.login', username: 'bob', reason: 'throttled' });
    trail.failure(req('192.0.2.2'), { action: 'auth.refresh', reason: 'invalid_refresh_token' });
    await trail.record(req('198.51.100.1', 'adm'), {
      actor: 'admin',
      action: 'user.create',
      target: 'carol',
      outcome: 'success',
    });
    expect(rows).toHaveLength(1);
    await trail.stop();
    expect(rows).toHaveLength(4);
    const byAddress = rows.filter((r) => r.action === 'auth.login' && r.address === '192.0.2.1');
    expect(byAddress).toHaveLength(1);
    expect(byAddress[0]).toMatchObject({
      actor: null,
      outcome: 'failure',
      details: {
        count: 10_000,
        reasons: { wrong_password: 5000, unknown_user: 5000 },
        usernames: expect.any(Array),
      },
    });
    expect(byAddress[0]?.details?.usernames).toHaveLength(10);
    expect(rows.find((r) => r.action === 'auth.refresh')?.details).toMatchObject({ count: 1 });
  });

  it('folds sources beyond the per-window cap into one row (spraying addresses buys no rows)', async () => {
    const rows: AuditEntry[] = [];
    const trail = createAuditTrail({
      store: fakeStore(rows),
      logger: pino({ level: 'silent' }) as FastifyBaseLogger,
      now: () => new Date(),
      failureWindowSeconds: 60,
      retentionDays: 0,
      maxSources: 100,
    });
    for (let i = 0; i < 5000; i++) {
      trail.failure(req(`2001:db8::${i.toString(16)}`), { action: 'auth.login', reason: 'x' });
    }
    await trail.flush();
    expect(rows).toHaveLength(101);
    const rest = rows.find((r) => r.address === null);
    expect(rest?.details).toMatchObject({ count: 4900, sources: 4900 });
    await trail.stop();
  });

  it('writes a window when it ends', async () => {
    const rows: AuditEntry[] = [];
    const trail = createAuditTrail({
      store: fakeStore(rows),
      logger: pino({ level: 'silent' }) as FastifyBaseLogger,
      now: () => new Date(),
      failureWindowSeconds: 1,
      retentionDays: 0,
    });
    trail.failure(req('192.0.2.9'), { action: 'auth.login', reason: 'x' });
    await new Promise((r) => setTimeout(r, 1300));
    expect(rows).toHaveLength(1);
    await trail.stop();
  });
});
