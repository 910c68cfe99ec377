import { randomUUID } from 'node:crypto';
import {
  type AnalysisRequestMessage,
  type Email,
  EnvelopeAddress,
  Job,
  type JobReport,
  JobSearchQuery,
  parseWith,
  type SubmitResponse,
  searchFiltersOf,
  type ValidationProblem,
} from '@trawl/contracts';
import { OUTLOOK_MSG_CONTENT_TYPE } from '@trawl/mail';
import { createRequestBatcher } from '@trawl/platform';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { actorOf } from '../auth/access.ts';
import type { GatewayContext } from '../context.ts';
import { type SentEmail, type SerializedEmail, serializeEmail } from '../email-json.ts';
import {
  BadQueryError,
  DependencyDownError,
  databaseDown,
  ForbiddenError,
  GATEWAY_ERRORS,
  NotFoundError,
  ValidationError,
} from '../errors.ts';
import { keepJsonText } from '../plugins/json-text.ts';
import { ReportFlag, reportedEmail } from '../report-intake.ts';
import { submissionParser } from '../submission.ts';
import { withFeedback } from './feedback.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const RawQuery = z.object({
  workflow_id: z.string().min(1).max(128).optional(),
  /** The message is a report to a reporting mailbox: its original is analysed (issue 16). */
  report: ReportFlag.optional(),
});

export function analyzeRoutes(ctx: GatewayContext): FastifyPluginAsync {
  const submission = submissionParser(ctx.emailParser);
  // The requests of one event-loop turn (the jobs of one group commit) go as one message (ADR 008).
  const requests = createRequestBatcher((body) => {
    // a message holding one job is named after it, as before batching
    const jobId = (body as { job_id?: unknown }).job_id;
    return ctx.broker.publish(
      ctx.topology.exchanges.analysis,
      ctx.topology.routingKeys.analysisRequested,
      body,
      typeof jobId === 'string' ? { persistent: true, messageId: jobId } : { persistent: true },
    );
  });

  /** Stores the job, publishes it with a confirm, and only then answers; no half-created job. */
  async function submit(
    request: FastifyRequest,
    /** Undefined when a CPU worker parsed it: `serialized` then holds it. */
    email: Email | undefined,
    workflowIdIn: string | undefined,
    source: 'json' | 'raw',
    origin?: { retriever: string; message_id: string },
    sent?: SentEmail,
    report?: JobReport,
    serialized?: SerializedEmail,
  ): Promise<SubmitResponse> {
    const snapshot = ctx.configState.current();
    const workflowId = workflowIdIn ?? snapshot.files.service.workflow.default_workflow_id;
    if (!snapshot.compiled.has(workflowId)) {
      throw new ValidationError([
        { path: '/workflow_id', message: `unknown workflow ${workflowId}` },
      ]);
    }
    const jobId = randomUUID();
    // The id (@trawl/mail's emailId) and the row's JSON text (the body's own, when it can be).
    const ser = serialized ?? (email ? serializeEmail(email, sent) : undefined);
    if (!ser) throw new Error('submit: neither an Email nor its serialized text');
    const { id: eid, json: emailJson, headline } = ser;
    const submittedBy = actorOf(request);
    // jobs.origin: the retriever (verdict callbacks) and, for a report, the report (issue 16)
    const stored = origin || report ? { ...origin, ...(report ? { report } : {}) } : undefined;
    try {
      await ctx.store.jobs.create({
        job_id: jobId,
        email_id: eid,
        workflow_id: workflowId,
        ...(email ? { email } : {}),
        email_json: emailJson,
        headline,
        ...(submittedBy ? { submitted_by: submittedBy } : {}),
        ...(stored ? { origin: stored } : {}),
      });
    } catch (err) {
      request.log.warn({ err }, 'job row could not be stored');
      throw databaseDown(err);
    }
    // A claim check (ADR 005): the row just stored holds the Email; the message only names the job.
    const message: AnalysisRequestMessage = {
      job_id: jobId,
      email_id: eid,
      workflow_id: workflowId,
      submitted_at: ctx.now().toISOString(),
      ...(origin ? { origin } : {}),
    };
    try {
      await requests.publish(message);
    } catch (err) {
      request.log.warn({ err, job_id: jobId }, 'broker did not confirm the job; removing it');
      try {
        await ctx.store.jobs.remove(jobId);
      } catch (removeErr) {
        request.log.error(
          { err: removeErr, job_id: jobId },
          'could not remove the unpublished job',
        );
      }
      throw new DependencyDownError(
        GATEWAY_ERRORS.brokerUnavailable,
        'the message broker is unavailable; retry later',
        err,
      );
    }
    ctx.metrics.jobsSubmitted.inc({ workflow: workflowId, source });
    // One info line per submission: the request-completed line carries these (request-log.ts).
    request.logFields = { job_id: jobId, email_id: eid, workflow: workflowId };
    return {
      job_id: jobId,
      email_id: eid,
      status: 'queued',
      workflow: workflowId,
      message: `analysis queued; fetch the result at /api/v1/analyze/${jobId}`,
    };
  }

  /**
   * A completed job with the campaign it is in (issue 16), read at every request: the campaign
   * grows after the job is cached. Best effort: without the database, the job as it is.
   */
  async function withCampaign(job: Job, request: FastifyRequest): Promise<Job> {
    if (job.status !== 'completed') return job;
    try {
      const campaign = await ctx.store.campaigns.forJob(job.job_id);
      return campaign ? { ...job, campaign } : job;
    } catch (err) {
      request.log.warn({ err }, 'could not read the campaign of the job');
      return job;
    }
  }

  return async (app) => {
    keepJsonText(app);
    app.post(
      '/analyze',
      {
        // the Email is mail content: the store keeps its U+0000 as visible text (ADR 014)
        config: { access: { role: 'analyst', service: ['jobs:submit'] }, mailContent: ['/email'] },
      },
      async (request) => {
        const body = request.body ?? {};
        const parsed = parseWith(submission, body);
        if (!parsed.ok) throw new ValidationError(parsed.problems, 'the submission is not valid');
        if (parsed.value.report) {
          // a report: its original is analysed, the report recorded apart (issue 16)
          const r = await reportedEmail(
            parsed.value.email,
            { limits: ctx.config.limits, maxBytes: ctx.config.limits.rawMessageBytes },
            ctx.now(),
          );
          return submit(
            request,
            r.email,
            parsed.value.workflow_id,
            'json',
            undefined,
            undefined,
            r.report,
          );
        }
        const sent =
          request.jsonText === null
            ? undefined
            : { body: request.jsonText, input: (body as { email?: unknown }).email };
        return submit(
          request,
          parsed.value.email,
          parsed.value.workflow_id,
          'json',
          undefined,
          sent,
        );
      },
    );

    app.register(async (raw) => {
      raw.addContentTypeParser(
        // an Outlook .msg (application/vnd.ms-outlook) is read as the message it holds
        ['message/rfc822', 'application/octet-stream', OUTLOOK_MSG_CONTENT_TYPE],
        { parseAs: 'buffer', bodyLimit: ctx.config.limits.rawMessageBytes },
        (_req, body, done) => done(null, body),
      );
      raw.post(
        '/analyze/raw',
        {
          config: { access: { role: 'analyst', service: ['jobs:submit', 'mail:submit'] } },
          bodyLimit: ctx.config.limits.rawMessageBytes,
        },
        async (request) => {
          const q = parseWith(RawQuery, request.query ?? {});
          if (!q.ok)
            throw new ValidationError(q.problems.map((p) => ({ ...p, path: `/query${p.path}` })));
          if (!Buffer.isBuffer(request.body) || request.body.length === 0) {
            throw new ValidationError([
              { path: '', message: 'the body must be an RFC 822 message' },
            ]);
          }
          // parseRawEmail answers TrawlErrors with their own codes: 422 (TRAWL_ERR_MAIL_INVALID /
          // _UNPARSEABLE, with problems) or 413 (TRAWL_ERR_MAIL_TOO_LARGE); the error handler maps them.
          const origin = originOf(request);
          const to = envelopeToOf(request);
          // An Outlook .msg (CFB signature, whatever the type said) becomes the RFC 822 message it
          // holds; a malformed one is a 422 (TRAWL_ERR_MAIL_UNPARSEABLE), never a crash. A large
          // message is parsed in a worker thread, cut at its deadline (issue 15: ctx.cpu).
          const { email, report, serialized } = await ctx.cpu.parseRaw({
            bytes: request.body,
            limits: ctx.config.limits,
            maxBytes: ctx.config.limits.rawMessageBytes,
            ...(to ? { envelopeTo: [...to] } : {}),
            ...(q.value.report ? { report: { now: ctx.now() } } : {}),
          });
          // the row text was made where the message was parsed (off this thread when large)
          return submit(
            request,
            email,
            q.value.workflow_id,
            'raw',
            origin,
            undefined,
            report,
            serialized,
          );
        },
      );
    });

    app.get(
      '/analyze/:job_id',
      { config: { access: { role: 'viewer', service: ['jobs:read'] } } },
      async (request) => {
        const { job_id: jobId } = request.params as { job_id: string };
        if (!UUID_RE.test(jobId)) throw new NotFoundError(`job ${jobId}`);
        const id = jobId.toLowerCase();
        // A finished job's cached copy leaves its evidence in the store (written once, issue 29):
        // the job is then read from the store, and the copy answers only while the store is down.
        let withoutEvidence: Job | undefined;
        try {
          const cached = await ctx.cache.get(`job:${id}`);
          if (cached) {
            const raw = JSON.parse(cached) as { evidence_stored?: unknown };
            const r = Job.safeParse(raw);
            if (r.success && raw.evidence_stored === true) withoutEvidence = r.data;
            else if (r.success) {
              return await withFeedback(ctx, await withCampaign(r.data, request), request);
            }
          }
        } catch (err) {
          request.log.warn({ err }, 'cache read failed; reading the database');
        }
        let job: Job | null;
        try {
          job = await ctx.store.jobs.get(id);
        } catch (err) {
          if (!withoutEvidence) throw databaseDown(err);
          request.log.warn({ err }, 'database read failed; answering the cached job');
          job = withoutEvidence;
        }
        if (!job) throw new NotFoundError(`job ${jobId}`);
        return withFeedback(ctx, await withCampaign(job, request), request);
      },
    );

    app.get(
      '/analyze',
      { config: { access: { role: 'viewer', service: ['jobs:list'] } } },
      async (request) => {
        const q = JobSearchQuery.safeParse(request.query ?? {});
        if (!q.success) throw new BadQueryError(queryProblems(q.error));
        const { limit, cursor } = q.data;
        try {
          return await ctx.store.jobs.list({
            limit,
            filters: searchFiltersOf(q.data),
            ...(cursor ? { cursor } : {}),
          });
        } catch (err) {
          if (cursor && (err as { status?: unknown }).status === 400)
            throw new BadQueryError([{ path: '/query/cursor', message: 'invalid cursor' }]);
          throw databaseDown(err);
        }
      },
    );
  };
}

/** Problems of a query, each naming its parameter (`/query/<name>`); unknown ones by name too. */
function queryProblems(error: z.ZodError): ValidationProblem[] {
  const out: ValidationProblem[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) {
        out.push({ path: `/query/${k}`, message: `unknown query parameter ${k}` });
      }
    } else {
      out.push({ path: `/query/${issue.path.map(String).join('/')}`, message: issue.message });
    }
  }
  return out;
}

const RETRIEVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/**
 * Where a raw message came from, so its verdict can go back to the mailbox: `X-Trawl-Retriever`
 * and `X-Trawl-Message-Id`. Only a retriever's own credential speaks for a retriever (the mail
 * orchestrator submits each message with the credential of the retriever it came from), and only
 * for itself: the origin's retriever is the credential's, and a header naming another is refused
 * (403), as is an origin sent with any other service credential. A user's headers are ignored (a
 * user cannot make Trawl act on a mailbox).
 */
function originOf(request: FastifyRequest): { retriever: string; message_id: string } | undefined {
  const p = request.principal;
  if (p?.kind !== 'service') return undefined;
  const retriever = request.headers['x-trawl-retriever'];
  const messageId = request.headers['x-trawl-message-id'];
  if (p.caller.kind !== 'retriever') {
    if (retriever !== undefined || messageId !== undefined) {
      throw new ForbiddenError(
        `the credential of ${p.username} cannot submit mail for a retriever`,
        GATEWAY_ERRORS.notRetriever,
      );
    }
    return undefined;
  }
  if (retriever !== undefined && retriever !== p.caller.id) {
    throw new ForbiddenError(
      `the credential of ${p.username} submits mail only as itself`,
      GATEWAY_ERRORS.notRetriever,
    );
  }
  if (typeof messageId !== 'string' || messageId.length === 0 || messageId.length > 1024) {
    return undefined;
  }
  if (!RETRIEVER_NAME.test(p.caller.id)) return undefined;
  return { retriever: p.caller.id, message_id: messageId };
}

/**
 * The envelope recipient a retriever knows (the mailbox a message was delivered to), sent by the
 * mail orchestrator as `X-Trawl-Envelope-To` (comma-separated addresses): the recipient of a
 * message whose headers name none (a Bcc copy), instead of refusing it. A retriever's credential
 * only, as for the origin; malformed entries are left out.
 */
function envelopeToOf(request: FastifyRequest): string[] | undefined {
  const p = request.principal;
  if (p?.kind !== 'service' || p.caller.kind !== 'retriever') return undefined;
  const header = request.headers['x-trawl-envelope-to'];
  if (typeof header !== 'string' || header.length > 16 * 321) return undefined;
  const to = header
    .split(',')
    .slice(0, 16)
    .map((a) => a.trim())
    .filter((a) => EnvelopeAddress.safeParse(a).success);
  return to.length > 0 ? to : undefined;
}
