import type { Job } from '@trawl/contracts';
import { FeedbackRequest, parseWith, TrawlError } from '@trawl/contracts';
import { emitWebhookEvent, publicFeedback } from '@trawl/platform';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { actorOf } from '../auth/access.ts';
import type { GatewayContext } from '../context.ts';
import {
  DependencyDownError,
  databaseDown,
  GATEWAY_ERRORS,
  NotFoundError,
  RateLimitedError,
  ValidationError,
} from '../errors.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A completed job with its analyst feedback (`feedback`: null when none), read at every request
 * (feedback changes after the job is cached). Best effort: without the database, the job as it is.
 */
export async function withFeedback(
  ctx: GatewayContext,
  job: Job,
  request: FastifyRequest,
): Promise<Job> {
  if (job.status !== 'completed') return job;
  try {
    const f = await ctx.store.feedback.get(job.job_id);
    return { ...job, feedback: f ? publicFeedback(f) : null };
  } catch (err) {
    request.log.warn({ err }, 'could not read the feedback of the job');
    return job;
  }
}

/**
 * POST /api/v1/analyze/{job_id}/feedback (issue 17): an analyst's verdict on a completed job.
 * A second feedback replaces the first. In one transaction: the feedback row, its search terms and
 * the `feedback.created` webhook event; then an audit entry (old and new) and the classifier
 * learns it (deps.learnFeedback; a failure there leaves the row marked unlearnt for a catch-up).
 */
const RANK: Record<string, number> = { viewer: 1, analyst: 2, admin: 3 };
const HOUR_MS = 3_600_000;

/** The rank of a caller's highest role (1 viewer, 2 analyst, 3 admin); 0 for a service. */
function rankOf(request: FastifyRequest): number {
  const roles = (request.principal?.roles ?? []) as readonly string[];
  return Math.max(0, ...roles.map((r) => RANK[r] ?? 0));
}

export function feedbackRoutes(ctx: GatewayContext): FastifyPluginAsync {
  const perHour = ctx.config.feedback?.ratePerHour ?? 120;

  /**
   * Per-user rate limit of feedback (issue 28), counted in the shared cache so every replica
   * counts the same requests; the cache down: not limited (the route itself needs the database).
   */
  async function limit(by: string | null): Promise<void> {
    if (by === null) return;
    const hit = await ctx.cache.hit(`fbrate:${by}`, HOUR_MS).catch(() => null);
    if (hit && hit.count > perHour) {
      throw new RateLimitedError(
        Math.max(1, Math.ceil(hit.resetMs / 1000)),
        GATEWAY_ERRORS.feedbackRateLimited,
        `at most ${perHour} feedback requests per hour per user`,
      );
    }
  }

  return async (app) => {
    app.post(
      '/analyze/:job_id/feedback',
      { config: { access: { role: 'analyst' } } },
      async (request) => {
        const { job_id: jobIdIn } = request.params as { job_id: string };
        if (!UUID_RE.test(jobIdIn)) throw new NotFoundError(`job ${jobIdIn}`);
        const jobId = jobIdIn.toLowerCase();
        await limit(actorOf(request));
        const parsed = parseWith(FeedbackRequest, request.body ?? {});
        if (!parsed.ok) throw new ValidationError(parsed.problems, 'the feedback is not valid');
        const { verdict } = parsed.value;
        const note = parsed.value.note?.trim() ? parsed.value.note.trim() : null;
        const job = await ctx.store.jobs.get(jobId).catch((err: unknown) => {
          throw databaseDown(err);
        });
        if (!job) throw new NotFoundError(`job ${jobIdIn}`);
        if (job.status !== 'completed' || !job.result) {
          throw new TrawlError(
            GATEWAY_ERRORS.jobNotCompleted,
            `job ${jobId} is ${job.status}: feedback is given on a completed job's verdict`,
            { status: 409 },
          );
        }
        const by = actorOf(request);
        const isPhishing = job.result.is_phishing;
        const { feedback, previous } = await ctx.store.sql.transaction(async (tx) => {
          const r = await ctx.store.feedback.give(
            {
              job_id: jobId,
              source: 'analyst',
              verdict,
              note,
              by,
              job_is_phishing: isPhishing,
              ...(rankOf(request) > 0 ? { rank: rankOf(request) } : {}),
            },
            tx,
          );
          await emitWebhookEvent(tx, 'feedback.created', {
            job_id: jobId,
            email_id: job.email_id,
            feedback: publicFeedback(r.feedback),
            previous: r.previous ? publicFeedback(r.previous) : null,
            job_verdict: {
              is_phishing: isPhishing,
              confidence: job.result?.confidence ?? null,
              threat_level: job.result?.threat_level ?? null,
            },
            disagrees: isPhishing !== (verdict === 'phishing'),
          });
          return r;
        });
        await ctx.audit.record(request, {
          actor: by,
          action: 'job.feedback',
          target: jobId,
          outcome: 'success',
          details: {
            old: previous
              ? { verdict: previous.verdict, note: previous.note, by: previous.by }
              : null,
            new: { verdict, note },
          },
        });
        let learning = 'off';
        if (ctx.learnFeedback) {
          try {
            learning = (await ctx.learnFeedback(jobId)).outcome;
          } catch (err) {
            // the row stays `learned ≠ verdict`: learnt on the next catch-up
            request.log.warn({ err, job_id: jobId }, 'feedback could not be learnt now');
            learning = 'pending';
          }
        }
        return {
          job_id: jobId,
          feedback: publicFeedback(feedback),
          previous: previous ? publicFeedback(previous) : null,
          learning,
        };
      },
    );

    /**
     * GET /api/v1/feedback/teachers (admin, issue 28): who taught the classifier what — per user,
     * the labels given, the jobs whose learnt label is theirs, those held (outvoted, capped) and
     * forgotten, and their share of every document the classifier learnt.
     */
    app.get('/feedback/teachers', { config: { access: { role: 'admin' } } }, async () => {
      const [teachers, totals] = await Promise.all([
        ctx.store.feedback.teachers(),
        ctx.store.classifier.totals(),
      ]).catch((err: unknown) => {
        throw databaseDown(err);
      });
      const documents = totals.phishing + totals.ham;
      return {
        documents,
        max_share_percent: ctx.config.feedback?.maxSharePercent ?? 20,
        teachers: teachers.map((t) => ({
          ...t,
          share: documents > 0 ? (t.learned.phishing + t.learned.legitimate) / documents : 0,
        })),
      };
    });

    /**
     * POST /api/v1/feedback/teachers/{user}/forget (admin, audited; `trawl learn --forget USER`):
     * every label the user gave stops counting and each of their jobs is decided again.
     */
    app.post(
      '/feedback/teachers/:user/forget',
      { config: { access: { role: 'admin' } } },
      async (request) => {
        const { user } = request.params as { user: string };
        if (!ctx.forgetTeacher) {
          throw new DependencyDownError(
            GATEWAY_ERRORS.databaseUnavailable,
            'feedback learning is not available in this gateway',
          );
        }
        const r = await ctx.forgetTeacher(user).catch((err: unknown) => {
          throw databaseDown(err);
        });
        await ctx.audit.record(request, {
          actor: actorOf(request),
          action: 'feedback.forget',
          target: user,
          outcome: 'success',
          details: { ...r },
        });
        return { user, ...r };
      },
    );
  };
}
