import { randomUUID } from 'node:crypto';
import {
  errorText,
  parseWith,
  QuarantineSubmit,
  TransientError,
  TrawlError,
} from '@trawl/contracts';
import type { FastifyPluginAsync } from 'fastify';
import { actorOf } from '../auth/access.ts';
import type { ServicePrincipal } from '../auth/service-principals.ts';
import type { GatewayContext } from '../context.ts';
import { databaseDown, GATEWAY_ERRORS, NotFoundError, ValidationError } from '../errors.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A release whose gateway died before the filter answered is taken again after this. */
const STALE_CLAIM_MS = 5 * 60_000;

function idOf(raw: string): string {
  if (!UUID_RE.test(raw)) throw new NotFoundError(`quarantined message ${raw}`);
  return raw.toLowerCase();
}

/**
 * Quarantine release (issue 32): the SMTP filter records the original of each message it
 * quarantines; analysts list them and release one, which the filter delivers to its recipients
 * once (a second release: 409), recording who released it (audit `quarantine.release`).
 */
export function quarantineRoutes(ctx: GatewayContext): FastifyPluginAsync {
  const db = <T>(p: Promise<T>) =>
    p.catch((err: unknown) => {
      throw databaseDown(err);
    });
  return async (app) => {
    app.post(
      '/quarantine',
      {
        // the subject is the quarantined message's, as its sender wrote it (ADR 014)
        config: { access: { service: ['quarantine:record'] }, mailContent: ['/subject'] },
        bodyLimit: 140 * 1024 * 1024,
      },
      async (request, reply) => {
        const caller = (request.principal as ServicePrincipal).caller;
        if (caller.kind !== 'retriever') {
          throw new TrawlError(GATEWAY_ERRORS.notRetriever, 'only a retriever records quarantine', {
            status: 403,
          });
        }
        const parsed = parseWith(QuarantineSubmit, request.body ?? {});
        if (!parsed.ok) throw new ValidationError(parsed.problems, 'not a quarantined message');
        const m = parsed.value;
        const rec = await db(
          ctx.store.quarantine.add({
            id: randomUUID(),
            retriever: caller.id,
            message_ref: m.message_ref,
            job_id: m.job_id ?? null,
            envelope_from: m.envelope_from,
            recipients: m.recipients,
            subject: m.subject,
            raw: m.raw,
            size: Math.floor((m.raw.length * 3) / 4),
          }),
        );
        return reply.code(201).send(rec);
      },
    );

    app.get('/quarantine', { config: { access: { role: 'viewer' } } }, async (request) => {
      const q = request.query as { job_id?: string; limit?: string };
      const limit = Math.min(200, Math.max(1, Number(q.limit ?? 50) || 50));
      if (q.job_id !== undefined && !UUID_RE.test(q.job_id)) {
        throw new ValidationError([{ path: '/query/job_id', message: 'must be a job id' }]);
      }
      const items = await db(
        ctx.store.quarantine.list({
          limit,
          ...(q.job_id ? { job_id: q.job_id.toLowerCase() } : {}),
        }),
      );
      return { items };
    });

    app.get('/quarantine/:id', { config: { access: { role: 'viewer' } } }, async (request) => {
      const id = idOf((request.params as { id: string }).id);
      const rec = await db(ctx.store.quarantine.get(id));
      if (!rec) throw new NotFoundError(`quarantined message ${id}`);
      return rec;
    });

    app.post(
      '/quarantine/:id/release',
      { config: { access: { role: 'analyst' } } },
      async (request) => {
        const id = idOf((request.params as { id: string }).id);
        const by = actorOf(request) ?? 'unknown';
        if (!ctx.releaseQuarantined) {
          throw new TransientError(
            GATEWAY_ERRORS.quarantineDelivery,
            'release is not configured: the gateway has no retriever to deliver through (TRAWL_MAIL_RETRIEVERS)',
          );
        }
        const claim = await db(ctx.store.quarantine.claim(id, by, STALE_CLAIM_MS));
        if (claim.kind === 'missing') throw new NotFoundError(`quarantined message ${id}`);
        if (claim.kind === 'refused') {
          const r = claim.record;
          throw new TrawlError(
            GATEWAY_ERRORS.quarantineReleased,
            r.state === 'released'
              ? `released already, by ${r.released_by ?? 'unknown'} at ${r.released_at}`
              : `a release by ${r.released_by ?? 'unknown'} is in progress`,
            { status: 409 },
          );
        }
        const m = claim.message;
        try {
          await ctx.releaseQuarantined(m.retriever, {
            id,
            envelope_from: m.envelope_from,
            recipients: m.recipients,
            released_by: by,
            raw: m.raw,
          });
        } catch (err) {
          await ctx.store.quarantine.unclaim(id).catch(() => undefined);
          const detail = errorText(err);
          await ctx.audit.record(request, {
            actor: by,
            action: 'quarantine.release',
            target: id,
            outcome: 'failure',
            details: { reason: detail.slice(0, 300), job_id: m.job_id },
          });
          // the message stays held: a later release may succeed
          throw new TransientError(
            GATEWAY_ERRORS.quarantineDelivery,
            `the message could not be delivered; it stays held: ${detail.slice(0, 300)}`,
            { retryAfterSeconds: 30 },
          );
        }
        const rec = await db(ctx.store.quarantine.released(id));
        await ctx.audit.record(request, {
          actor: by,
          action: 'quarantine.release',
          target: id,
          outcome: 'success',
          details: {
            job_id: m.job_id,
            recipients: m.recipients.slice(0, 50),
            retriever: m.retriever,
          },
        });
        return rec;
      },
    );
  };
}
