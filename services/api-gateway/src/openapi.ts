import {
  AnalysisResult,
  AnalyzerConfigView,
  CampaignDetail,
  CampaignList,
  ConfigView,
  CreateWebhook,
  Email,
  FeedbackAnswer,
  FeedbackRequest,
  Job,
  JobList,
  MessageView,
  ProblemDetails,
  ReloadResponse,
  SubmitRequest,
  SubmitResponse,
  Trace,
  UpdateWebhook,
  Webhook,
  Workflow,
} from '@trawl/contracts';
import { z } from 'zod';

function schema(s: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return rest;
}

const TokenResponse = z.object({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  expires_in: z.number().int(),
  refresh_token: z.string(),
});
const TokenRequest = z.object({
  grant_type: z.enum(['password', 'refresh_token']),
  username: z.string().optional(),
  password: z.string().optional(),
  refresh_token: z.string().optional(),
});
const Health = z.object({
  status: z.string(),
  service: z.string(),
  version: z.string(),
  features: z.object({
    configuration_api: z.boolean(),
    database_config: z.boolean(),
    oauth: z.boolean(),
    rate_limiting: z.boolean(),
    audit_logging: z.boolean(),
  }),
});
const ValidateAnswer = z.object({
  valid: z.boolean(),
  problems: z.array(z.object({ path: z.string(), message: z.string() })),
});
const DryRunAnswer = z.object({
  workflow: z.string(),
  status: z.enum(['completed', 'failed']),
  result: AnalysisResult.optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  trace: Trace,
});
const UserView = z.object({
  username: z.string(),
  roles: z.array(z.enum(['viewer', 'analyst', 'admin'])),
  disabled: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ content: { 'application/json': { schema: ref(name) } } });
const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ref('ProblemDetails') } },
});
const std = {
  '401': problem('missing, invalid or expired credentials'),
  '403': problem('the role does not allow this action'),
  '429': problem('rate limited'),
};

function op(
  summary: string,
  roles: string,
  ok: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  errors: Record<string, unknown> = {},
) {
  return {
    summary,
    description: `Allowed: ${roles}.`,
    ...extra,
    responses: { ...ok, ...std, ...errors },
  };
}

let cached: Record<string, unknown> | undefined;

/** The OpenAPI 3.1 document, built from the same zod schemas the routes validate with. */
export function openApiDocument(version: string): Record<string, unknown> {
  if (cached) return { ...cached, info: { ...(cached.info as object), version } };
  const pathParam = (name: string) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  });
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'Trawl API',
      version,
      description: 'Phishing analysis: submit emails, read verdicts, manage configuration.',
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        internalKey: { type: 'apiKey', in: 'header', name: 'X-Internal-API-Key' },
        password: {
          type: 'oauth2',
          flows: { password: { tokenUrl: '/auth/token', refreshUrl: '/auth/refresh', scopes: {} } },
        },
      },
      schemas: {
        Email: schema(Email),
        SubmitRequest: schema(SubmitRequest),
        SubmitResponse: schema(SubmitResponse),
        Job: schema(Job),
        JobList: schema(JobList),
        AnalysisResult: schema(AnalysisResult),
        ConfigView: schema(ConfigView),
        AnalyzerConfigView: schema(AnalyzerConfigView),
        ReloadResponse: schema(ReloadResponse),
        Workflow: schema(Workflow),
        ValidateAnswer: schema(ValidateAnswer),
        DryRunAnswer: schema(DryRunAnswer),
        ProblemDetails: schema(ProblemDetails),
        TokenRequest: schema(TokenRequest),
        TokenResponse: schema(TokenResponse),
        Health: schema(Health),
        User: schema(UserView),
        MessageView: schema(MessageView),
        CampaignList: schema(CampaignList),
        CampaignDetail: schema(CampaignDetail),
        FeedbackRequest: schema(FeedbackRequest),
        FeedbackAnswer: schema(FeedbackAnswer),
        CreateWebhook: schema(CreateWebhook),
        UpdateWebhook: schema(UpdateWebhook),
        Webhook: schema(Webhook),
        NewWebhook: schema(Webhook.extend({ secret: z.string() })),
      },
    },
    security: [{ bearer: [] }, { internalKey: [] }],
    paths: {
      '/health': {
        get: {
          summary: 'Liveness and feature flags',
          security: [],
          responses: { '200': { description: 'ok', ...json('Health') } },
        },
      },
      '/auth/token': {
        post: {
          summary: 'Password grant (also refresh_token grant)',
          security: [],
          requestBody: {
            required: true,
            content: {
              'application/x-www-form-urlencoded': { schema: ref('TokenRequest') },
              'application/json': { schema: ref('TokenRequest') },
            },
          },
          responses: {
            '200': { description: 'tokens', ...json('TokenResponse') },
            '401': problem('invalid credentials'),
            '422': problem('missing fields'),
            '429': problem('too many failed logins'),
          },
        },
      },
      '/auth/refresh': {
        post: {
          summary: 'Rotate a refresh token (single use)',
          security: [],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { refresh_token: { type: 'string' } },
                  required: ['refresh_token'],
                },
              },
            },
          },
          responses: {
            '200': { description: 'tokens', ...json('TokenResponse') },
            '401': problem('invalid, used or expired refresh token'),
          },
        },
      },
      '/auth/logout': {
        post: {
          summary:
            'Sign out: use up the refresh token (body or trawl_refresh cookie), clear the cookie',
          security: [],
          responses: { '204': { description: 'signed out' } },
        },
      },
      '/auth/me': {
        get: op('The caller', 'any role, internal key', {
          '200': { description: 'username and roles' },
        }),
      },
      '/api/v1/analyze': {
        post: op(
          'Submit an email for analysis',
          'analyst, admin, internal key',
          { '200': { description: 'queued', ...json('SubmitResponse') } },
          { requestBody: { required: true, ...json('SubmitRequest') } },
          {
            '413': problem('body too large'),
            '422': problem('invalid Email or unknown workflow_id'),
            '503': problem('database or broker unavailable'),
          },
        ),
        get: op(
          'List jobs, newest first',
          'viewer, analyst, admin, internal key',
          { '200': { description: 'a page', ...json('JobList') } },
          {
            parameters: [
              {
                name: 'status',
                in: 'query',
                schema: { type: 'string', enum: ['queued', 'processing', 'completed', 'failed'] },
              },
              {
                name: 'limit',
                in: 'query',
                schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
              },
              { name: 'cursor', in: 'query', schema: { type: 'string' } },
              {
                name: 'reporter',
                in: 'query',
                description: 'jobs of messages this address reported (reported-mail triage)',
                schema: { type: 'string', format: 'email' },
              },
            ],
          },
        ),
      },
      '/api/v1/analyze/raw': {
        post: op(
          'Submit a raw RFC 822 message',
          'analyst, admin, internal key',
          { '200': { description: 'queued', ...json('SubmitResponse') } },
          {
            parameters: [
              { name: 'workflow_id', in: 'query', schema: { type: 'string' } },
              {
                name: 'report',
                in: 'query',
                description:
                  'true: the message is a report to a reporting mailbox; the original inside it is analysed and the reporter recorded apart (docs/mail-ingestion.md, "Reported mail")',
                schema: { type: 'string', enum: ['true', 'false', '1', '0'] },
              },
            ],
            requestBody: {
              required: true,
              content: {
                'message/rfc822': { schema: { type: 'string', format: 'binary' } },
                // an Outlook .msg: read as the message it holds; a malformed one is a 422
                'application/vnd.ms-outlook': { schema: { type: 'string', format: 'binary' } },
              },
            },
          },
          {
            '413': problem('message too large'),
            '422': problem('not a valid Email'),
            '503': problem('unavailable'),
          },
        ),
      },
      '/api/v1/analyze/{job_id}': {
        get: op(
          'A job and, when completed, its result',
          'viewer, analyst, admin, internal key',
          { '200': { description: 'the job', ...json('Job') } },
          { parameters: [pathParam('job_id')] },
          { '404': problem('unknown job') },
        ),
      },
      '/api/v1/analyze/{job_id}/message': {
        get: op(
          'The message of a job: headers, text, inert HTML, attachments (issue 16)',
          'viewer, analyst, admin, internal key',
          { '200': { description: 'the message', ...json('MessageView') } },
          {
            parameters: [pathParam('job_id')],
            description:
              "Allowed: viewer, analyst, admin, internal key. `html` is sanitized (no scripts, event handlers or remote loads; links as data-trawl-href); render it only in a sandboxed iframe with CSP `default-src 'none'; style-src 'unsafe-inline'; img-src data:`.",
          },
          {
            '404': problem('unknown job'),
            '410': problem(
              'the body was removed by the retention purge (TRAWL_ERR_MESSAGE_PURGED)',
            ),
          },
        ),
      },
      '/api/v1/analyze/{job_id}/message/raw': {
        get: op(
          'The message of a job as message/rfc822, rebuilt from what is stored',
          'analyst, admin',
          {
            '200': {
              description: 'the message',
              content: { 'message/rfc822': { schema: { type: 'string', format: 'binary' } } },
            },
          },
          { parameters: [pathParam('job_id')] },
          {
            '404': problem('unknown job'),
            '410': problem(
              'the body was removed by the retention purge (TRAWL_ERR_MESSAGE_PURGED)',
            ),
          },
        ),
      },
      '/api/v1/campaigns': {
        get: op(
          'Campaigns (messages that share their lure), newest activity first',
          'viewer, analyst, admin, internal key',
          { '200': { description: 'a page', ...json('CampaignList') } },
          {
            parameters: [
              {
                name: 'limit',
                in: 'query',
                schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
              },
              { name: 'cursor', in: 'query', schema: { type: 'string' } },
            ],
          },
          { '400': problem('unknown or malformed query parameter') },
        ),
      },
      '/api/v1/campaigns/{id}': {
        get: op(
          'One campaign and a page of its members (recipients, verdicts), newest first',
          'viewer, analyst, admin, internal key',
          { '200': { description: 'the campaign', ...json('CampaignDetail') } },
          {
            parameters: [
              pathParam('id'),
              {
                name: 'limit',
                in: 'query',
                schema: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
              },
              { name: 'cursor', in: 'query', schema: { type: 'string' } },
            ],
          },
          { '400': problem('malformed query parameter'), '404': problem('unknown campaign') },
        ),
      },
      '/api/v1/config': {
        get: op('Configuration summary', 'viewer, analyst, admin, internal key', {
          '200': { description: 'config', ...json('ConfigView') },
        }),
      },
      '/api/v1/config/analyzers/{id}': {
        get: op(
          'One analyzer configuration',
          'admin, internal key',
          { '200': { description: 'analyzer', ...json('AnalyzerConfigView') } },
          { parameters: [pathParam('id')] },
          { '404': problem('unknown analyzer') },
        ),
      },
      '/api/v1/config/reload': {
        post: op(
          'Reload both configuration files',
          'admin',
          { '200': { description: 'versions', ...json('ReloadResponse') } },
          {},
          { '400': problem('invalid configuration (every problem listed); the old one is kept') },
        ),
      },
      '/api/v1/workflows': {
        get: op('List workflows', 'viewer, analyst, admin, internal key', {
          '200': { description: 'workflows' },
        }),
      },
      '/api/v1/workflows/{id}': {
        get: op(
          'One workflow',
          'viewer, analyst, admin, internal key',
          { '200': { description: 'workflow', ...json('Workflow') } },
          { parameters: [pathParam('id')] },
          { '404': problem('unknown workflow') },
        ),
      },
      '/api/v1/workflows/validate': {
        post: op(
          'Validate a workflow',
          'analyst, admin',
          { '200': { description: 'problems', ...json('ValidateAnswer') } },
          { requestBody: { required: true, ...json('Workflow') } },
        ),
      },
      '/api/v1/workflows/{id}/dry-run': {
        post: op(
          'Run a workflow synchronously on an Email (no job, no broker)',
          'analyst, admin',
          { '200': { description: 'result and trace', ...json('DryRunAnswer') } },
          { parameters: [pathParam('id')], requestBody: { required: true, ...json('Email') } },
          { '404': problem('unknown workflow'), '422': problem('invalid Email') },
        ),
      },
      '/api/v1/system/stats': {
        get: op('Jobs by hour and outcome (24 h), failing analyzers, queue depth', 'any role', {
          '200': { description: 'statistics for the console overview' },
        }),
      },
      '/api/v1/config/versions': {
        get: op('Configuration versions run, newest first (50)', 'admin', {
          '200': { description: 'versions' },
        }),
      },
      '/api/v1/events': {
        get: op(
          'Server-Sent Events: job.created, job.completed, job.failed (bearer header; read with fetch)',
          'any role',
          { '200': { description: 'text/event-stream' } },
          {},
          { '503': problem('broker unavailable') },
        ),
      },
      '/api/v1/system/health': {
        get: op(
          'Dependencies and plugins',
          'any role, internal key',
          { '200': { description: 'all ok' } },
          {},
          { '503': { description: 'degraded' } },
        ),
      },
      '/api/v1/analyze/{job_id}/feedback': {
        post: op(
          "An analyst's verdict on a completed job (replaces an earlier one; trains the classifier)",
          'analyst, admin',
          { '200': { description: 'stored', ...json('FeedbackAnswer') } },
          {
            parameters: [pathParam('job_id')],
            requestBody: { required: true, ...json('FeedbackRequest') },
          },
          {
            '404': problem('unknown job'),
            '409': problem('the job is not completed'),
            '422': problem('invalid feedback'),
          },
        ),
      },
      '/api/v1/webhooks': {
        get: op('Webhook endpoints (no secrets)', 'admin', { '200': { description: 'endpoints' } }),
        post: op(
          'Register a webhook endpoint; the answer carries its signing secret, shown only here',
          'admin',
          { '201': { description: 'created', ...json('NewWebhook') } },
          { requestBody: { required: true, ...json('CreateWebhook') } },
          { '422': problem('invalid URL (http/https only) or event') },
        ),
      },
      '/api/v1/webhooks/{id}': {
        get: op(
          'One webhook endpoint',
          'admin',
          { '200': { description: 'endpoint', ...json('Webhook') } },
          { parameters: [pathParam('id')] },
          { '404': problem('unknown webhook') },
        ),
        patch: op(
          'Change URL, events, description or enabled (re-enabling clears the failure state)',
          'admin',
          { '200': { description: 'endpoint', ...json('Webhook') } },
          {
            parameters: [pathParam('id')],
            requestBody: { required: true, ...json('UpdateWebhook') },
          },
          { '404': problem('unknown webhook'), '422': problem('invalid change') },
        ),
        delete: op(
          'Remove a webhook endpoint and its pending deliveries',
          'admin',
          { '204': { description: 'removed' } },
          { parameters: [pathParam('id')] },
          { '404': problem('unknown webhook') },
        ),
      },
      '/api/v1/webhooks/{id}/deliveries': {
        get: op(
          'Delivery log: every attempt, newest first (?limit=&cursor=)',
          'admin',
          { '200': { description: 'a page of attempts' } },
          { parameters: [pathParam('id')] },
          { '404': problem('unknown webhook') },
        ),
      },
      '/api/v1/users': {
        get: op('List users', 'admin', { '200': { description: 'users' } }),
        post: op(
          'Create a user',
          'admin',
          { '201': { description: 'created', ...json('User') } },
          {},
          { '409': problem('exists'), '422': problem('invalid') },
        ),
      },
      '/api/v1/users/{username}': {
        get: op(
          'One user',
          'admin',
          { '200': { description: 'user', ...json('User') } },
          { parameters: [pathParam('username')] },
          { '404': problem('unknown user') },
        ),
        patch: op(
          'Change password, roles or disabled',
          'admin',
          { '200': { description: 'user', ...json('User') } },
          { parameters: [pathParam('username')] },
          { '404': problem('unknown user'), '409': problem('last admin') },
        ),
        delete: op(
          'Remove a user',
          'admin',
          { '204': { description: 'removed' } },
          { parameters: [pathParam('username')] },
          { '404': problem('unknown user'), '409': problem('last admin') },
        ),
      },
      '/api/v1/audit': {
        get: op('Audit log, newest first (by id)', 'admin', { '200': { description: 'a page' } }),
      },
      '/api/v1/audit/verify': {
        get: op('Check the audit hash chain from its anchor to its head', 'admin', {
          '200': { description: '{ok, checked, unchained, anchor, head, broken?}' },
        }),
      },
      '/metrics': {
        get: {
          summary: 'Prometheus metrics',
          security: [],
          responses: { '200': { description: 'text exposition' } },
        },
      },
    },
  };
  return cached;
}
