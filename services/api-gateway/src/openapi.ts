import {
  AnalysisResult,
  AnalyzerConfigView,
  CampaignDetail,
  CampaignList,
  ConfigView,
  CreateListEntry,
  CreateWebhook,
  Email,
  FeedbackAnswer,
  FeedbackRequest,
  Job,
  JobList,
  ListEntries,
  ListEntry,
  MessageView,
  ProblemDetails,
  QuarantineRecord,
  QuarantineSubmit,
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
  /** Absent when the request said `X-Trawl-Refresh: cookie`: it is in the cookie only. */
  refresh_token: z.string().optional(),
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

const FeedbackTeachers = z.object({
  /** Every document the classifier learnt (corpus training and feedback). */
  documents: z.number().int(),
  max_share_percent: z.number().int(),
  teachers: z.array(
    z.object({
      user: z.string(),
      labels: z.number().int(),
      learned: z.object({ phishing: z.number().int(), legitimate: z.number().int() }),
      held: z.object({ outvoted: z.number().int(), capped: z.number().int() }),
      forgotten: z.number().int(),
      last_at: z.string().nullable(),
      share: z.number(),
    }),
  ),
});
const ForgetAnswer = z.object({
  user: z.string(),
  /** Jobs decided again (those with a label of the user, or learnt from them). */
  jobs: z.number().int(),
  /** Jobs whose learnt label changed. */
  changed: z.number().int(),
});
const ChangePassword = z.object({
  current_password: z.string(),
  new_password: z.string().describe('follows the password rule (docs/security.md)'),
});
const PasswordChanged = z.object({ changed: z.literal(true), message: z.string() });

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
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

type Json = Record<string, unknown>;
/** Error responses: a string is the description of a problem+json answer. */
type Errors = Record<string, string | Json>;

const READERS = 'viewer, analyst, admin, internal key';
const SUBMITTERS = 'analyst, admin, internal key';
const ANALYSTS = 'analyst, admin';
const binary = { schema: { type: 'string', format: 'binary' } };
const PURGED = 'the body was removed by the retention purge (TRAWL_ERR_MESSAGE_PURGED)';

/** A success response under `status`, with a JSON body of `schemaName` when given. */
function reply(status: string, description: string, schemaName?: string): Json {
  return { [status]: schemaName ? { description, ...json(schemaName) } : { description } };
}
const ok = (description: string, schemaName?: string) => reply('200', description, schemaName);
const body = (schemaName: string) => ({ requestBody: { required: true, ...json(schemaName) } });
const query = (name: string, schema: Json, description?: string) =>
  description ? { name, in: 'query', description, schema } : { name, in: 'query', schema };
const paging = [
  query('limit', { type: 'integer', minimum: 1, maximum: 200, default: 50 }),
  query('cursor', { type: 'string' }),
];

function problems(errors: Errors): Json {
  return Object.fromEntries(
    Object.entries(errors).map(([status, e]) => [status, typeof e === 'string' ? problem(e) : e]),
  );
}

/** An authenticated operation: the roles allowed, its success, its own errors, then the rest. */
function op(summary: string, roles: string, success: Json, errors: Errors = {}, extra: Json = {}) {
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
function open(summary: string, responses: Json, extra: Json = {}) {
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
function withPathParams(paths: Record<string, Record<string, Json>>) {
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

const paths = withPathParams({
  '/health': { get: open('Liveness and feature flags', ok('ok', 'Health')) },
  '/auth/token': {
    post: open(
      'Password grant (also refresh_token grant)',
      {
        ...ok('tokens', 'TokenResponse'),
        ...problems({
          '401': 'invalid credentials',
          '422': 'missing fields',
          '429': 'too many failed logins',
        }),
      },
      {
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': { schema: ref('TokenRequest') },
            'application/json': { schema: ref('TokenRequest') },
          },
        },
      },
    ),
  },
  '/auth/refresh': {
    post: open(
      'Rotate a refresh token (single use)',
      {
        ...ok('tokens', 'TokenResponse'),
        ...problems({
          '401': 'invalid, used or expired refresh token; in cookie mode, no session cookie',
          '422': 'no refresh_token in the body (outside cookie mode)',
        }),
      },
      {
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
      },
    ),
  },
  '/auth/logout': {
    post: open(
      'Sign out: use up the refresh token (body or trawl_refresh cookie), clear the cookie',
      reply('204', 'signed out'),
    ),
  },
  '/auth/me': { get: op('The caller', 'any role, internal key', ok('username and roles')) },
  '/api/v1/analyze': {
    post: op(
      'Submit an email for analysis',
      SUBMITTERS,
      ok('queued', 'SubmitResponse'),
      {
        '413': 'body too large',
        '422': 'invalid Email or unknown workflow_id',
        '503': 'database or broker unavailable',
      },
      body('SubmitRequest'),
    ),
    get: op(
      'List jobs, newest first, with what the list shows of each (subject, sender, recipients, reporter, top indicator); filters combine with AND',
      READERS,
      ok('a page', 'JobList'),
      {
        '400': 'unknown or malformed query parameter (each named in errors[].path)',
        '503': 'database unavailable',
      },
      {
        parameters: [
          query('status', {
            type: 'string',
            enum: ['queued', 'processing', 'completed', 'failed'],
          }),
          paging[0],
          paging[1],
          query(
            'reporter',
            { type: 'string', format: 'email' },
            'jobs of messages this address reported (reported-mail triage)',
          ),
          query('is_phishing', { type: 'string', enum: ['true', 'false'] }),
          query('threat_level', {
            type: 'string',
            enum: ['none', 'low', 'medium', 'high', 'critical'],
          }),
          query('action', { type: 'string', enum: ['allow', 'flag', 'review', 'quarantine'] }),
          query('sender', { type: 'string' }, 'an address or a domain'),
          query('recipient', { type: 'string' }, 'an address or a domain'),
          query('subject', { type: 'string' }, 'every word must appear'),
          query('url_domain', { type: 'string' }, 'a URL host or registrable domain'),
          query('sha256', { type: 'string', pattern: '^[a-fA-F0-9]{64}$' }),
          query('indicator', { type: 'string' }, 'an indicator type such as url_shortener'),
          query('workflow', { type: 'string' }),
          query('submitter', { type: 'string' }),
          query('email_id', { type: 'string' }),
          query('feedback', {
            type: 'string',
            enum: ['phishing', 'legitimate', 'none', 'disagrees'],
          }),
          query('campaign', { type: 'string', format: 'uuid' }),
          query('since', { type: 'string' }, 'ISO 8601 date or timestamp'),
          query('until', { type: 'string' }, 'ISO 8601 date or timestamp'),
        ],
      },
    ),
  },
  '/api/v1/analyze/raw': {
    post: op(
      'Submit a raw RFC 822 message',
      SUBMITTERS,
      ok('queued', 'SubmitResponse'),
      { '413': 'message too large', '422': 'not a valid Email', '503': 'unavailable' },
      {
        parameters: [
          query('workflow_id', { type: 'string' }),
          query(
            'report',
            { type: 'string', enum: ['true', 'false', '1', '0'] },
            'true: the message is a report to a reporting mailbox; the original inside it is analysed and the reporter recorded apart (docs/mail-ingestion.md, "Reported mail")',
          ),
        ],
        requestBody: {
          required: true,
          // an Outlook .msg: read as the message it holds; a malformed one is a 422
          content: { 'message/rfc822': binary, 'application/vnd.ms-outlook': binary },
        },
      },
    ),
  },
  '/api/v1/analyze/{job_id}': {
    get: op('A job and, when completed, its result', READERS, ok('the job', 'Job'), {
      '404': 'unknown job',
    }),
  },
  '/api/v1/analyze/{job_id}/message': {
    get: op(
      'The message of a job: headers, text, inert HTML, attachments (issue 16)',
      READERS,
      ok('the message', 'MessageView'),
      { '404': 'unknown job', '410': PURGED },
      {
        description:
          "Allowed: viewer, analyst, admin, internal key. `html` is sanitized (no scripts, event handlers or remote loads; links as data-trawl-href); render it only in a sandboxed iframe with CSP `default-src 'none'; style-src 'unsafe-inline'; img-src data:`.",
      },
    ),
  },
  '/api/v1/analyze/{job_id}/message/raw': {
    get: op(
      'The message of a job as message/rfc822, rebuilt from what is stored',
      ANALYSTS,
      { '200': { description: 'the message', content: { 'message/rfc822': binary } } },
      { '404': 'unknown job', '410': PURGED },
    ),
  },
  '/api/v1/campaigns': {
    get: op(
      'Campaigns (messages that share their lure), newest activity first',
      READERS,
      ok('a page', 'CampaignList'),
      { '400': 'unknown or malformed query parameter' },
      { parameters: paging },
    ),
  },
  '/api/v1/campaigns/{id}': {
    get: op(
      'One campaign and a page of its members (recipients, verdicts), newest first',
      READERS,
      ok('the campaign', 'CampaignDetail'),
      { '400': 'malformed query parameter', '404': 'unknown campaign' },
      { parameters: paging },
    ),
  },
  '/api/v1/config': { get: op('Configuration summary', READERS, ok('config', 'ConfigView')) },
  '/api/v1/config/analyzers/{id}': {
    get: op(
      'One analyzer configuration',
      'admin, internal key',
      ok('analyzer', 'AnalyzerConfigView'),
      {
        '404': 'unknown analyzer',
      },
    ),
  },
  '/api/v1/config/reload': {
    post: op('Reload both configuration files', 'admin', ok('versions', 'ReloadResponse'), {
      '400': 'invalid configuration (every problem listed); the old one is kept',
    }),
  },
  '/api/v1/workflows': { get: op('List workflows', READERS, ok('workflows')) },
  '/api/v1/workflows/{id}': {
    get: op('One workflow', READERS, ok('workflow', 'Workflow'), { '404': 'unknown workflow' }),
  },
  '/api/v1/workflows/validate': {
    post: op(
      'Validate a workflow',
      ANALYSTS,
      ok('problems', 'ValidateAnswer'),
      {},
      body('Workflow'),
    ),
  },
  '/api/v1/workflows/{id}/dry-run': {
    post: op(
      'Run a workflow synchronously on an Email (no job, no broker)',
      ANALYSTS,
      ok('result and trace', 'DryRunAnswer'),
      { '404': 'unknown workflow', '422': 'invalid Email' },
      body('Email'),
    ),
  },
  '/api/v1/system/stats': {
    get: op(
      'Jobs by hour and outcome (24 h), failing analyzers, queue depth',
      'any role',
      ok('statistics for the console overview'),
    ),
  },
  '/api/v1/config/versions': {
    get: op('Configuration versions run, newest first (50)', 'admin', ok('versions')),
  },
  '/api/v1/events': {
    get: op(
      'Server-Sent Events: job.created, job.completed, job.failed (bearer header; read with fetch)',
      'any role',
      ok('text/event-stream'),
      { '503': 'broker unavailable' },
    ),
  },
  '/api/v1/system/health': {
    get: op('Dependencies and plugins', 'any role, internal key', ok('all ok'), {
      '503': { description: 'degraded' },
    }),
  },
  '/api/v1/analyze/{job_id}/feedback': {
    post: op(
      "An analyst's verdict on a completed job (replaces an earlier one; trains the classifier)",
      ANALYSTS,
      ok('stored', 'FeedbackAnswer'),
      {
        '404': 'unknown job',
        '409': 'the job is not completed',
        '422': 'invalid feedback',
        '429': 'the user made TRAWL_FEEDBACK_RATE_PER_HOUR requests this hour (Retry-After)',
      },
      body('FeedbackRequest'),
    ),
  },
  '/api/v1/feedback/teachers': {
    get: op(
      'Who taught the classifier what: per user, labels given, learnt, held and forgotten, and share',
      'admin',
      ok('the teachers, most learnt first', 'FeedbackTeachers'),
    ),
  },
  '/api/v1/feedback/teachers/{user}/forget': {
    post: op(
      'Unlearn every feedback label a user gave; each of their jobs is decided again (audited)',
      'admin',
      ok('what changed', 'ForgetAnswer'),
      { '503': 'the database (or feedback learning) is unavailable' },
    ),
  },
  '/api/v1/quarantine': {
    get: op(
      'Messages the SMTP filter quarantined, newest first (?job_id=&limit=); never their content',
      'any role',
      ok('{items: QuarantineRecord[]}'),
      { '422': 'invalid job_id' },
    ),
    post: op(
      'The SMTP filter records the original of a message it quarantined (one per message)',
      'a retriever credential',
      reply('201', 'recorded', 'QuarantineRecord'),
      { '403': 'not a retriever', '422': 'invalid record' },
      body('QuarantineSubmit'),
    ),
  },
  '/api/v1/quarantine/{id}': {
    get: op('One quarantined message', 'any role', ok('record', 'QuarantineRecord'), {
      '404': 'unknown id',
    }),
  },
  '/api/v1/quarantine/{id}/release': {
    post: op(
      'Deliver the original to its recipients once, through the filter that holds it; audited',
      ANALYSTS,
      ok('released', 'QuarantineRecord'),
      {
        '404': 'unknown id',
        '409': 'released already, or a release in progress',
        '503': 'the filter could not deliver it (it stays held) or release is not configured',
      },
    ),
  },
  '/api/v1/webhooks': {
    get: op('Webhook endpoints (no secrets)', 'admin', ok('endpoints')),
    post: op(
      'Register a webhook endpoint; the answer carries its signing secret, shown only here',
      'admin',
      reply('201', 'created', 'NewWebhook'),
      { '422': 'invalid URL (http/https only) or event' },
      body('CreateWebhook'),
    ),
  },
  '/api/v1/webhooks/{id}': {
    get: op('One webhook endpoint', 'admin', ok('endpoint', 'Webhook'), {
      '404': 'unknown webhook',
    }),
    patch: op(
      'Change URL, events, description or enabled (re-enabling clears the failure state)',
      'admin',
      ok('endpoint', 'Webhook'),
      { '404': 'unknown webhook', '422': 'invalid change' },
      body('UpdateWebhook'),
    ),
    delete: op(
      'Remove a webhook endpoint and its pending deliveries',
      'admin',
      reply('204', 'removed'),
      {
        '404': 'unknown webhook',
      },
    ),
  },
  '/api/v1/webhooks/{id}/deliveries': {
    get: op(
      'Delivery log: every attempt, newest first (?limit=&cursor=)',
      'admin',
      ok('a page of attempts'),
      {
        '404': 'unknown webhook',
      },
    ),
  },
  '/api/v1/lists': {
    get: op(
      'The allow and block list entries, newest first (expired ones marked)',
      'analyst, admin',
      ok('the entries', 'ListEntries'),
      { '400': 'unknown or malformed query parameter', '503': 'database unavailable' },
      {
        parameters: [
          query('list', { type: 'string', enum: ['allow', 'block'] }),
          query('kind', {
            type: 'string',
            enum: ['sender', 'sender_domain', 'url_host', 'sha256'],
          }),
        ],
      },
    ),
    post: op(
      'Add an entry to the allow or block list (audited; the analyzers read the lists again)',
      'admin',
      reply('201', 'added', 'ListEntry'),
      {
        '409': 'the list already holds this kind and value, or is full',
        '422': 'invalid entry (the value does not fit its kind, an expiry in the past)',
      },
      body('CreateListEntry'),
    ),
  },
  '/api/v1/lists/{id}': {
    get: op('One list entry', 'analyst, admin', ok('the entry', 'ListEntry'), {
      '404': 'unknown entry',
    }),
    delete: op('Remove a list entry (audited)', 'admin', reply('204', 'removed'), {
      '404': 'unknown entry',
    }),
  },
  '/api/v1/me/password': {
    post: op(
      'Change your own password (the current one is required); every session of yours ends',
      'any role',
      ok('changed', 'PasswordChanged'),
      {
        '403': 'the current password is not right (TRAWL_ERR_AUTH_WRONG_PASSWORD)',
        '422': 'the new password does not follow the password rule',
        '503': 'database unavailable',
      },
      body('ChangePassword'),
    ),
  },
  '/api/v1/users': {
    get: op('List users', 'admin', ok('users')),
    post: op('Create a user', 'admin', reply('201', 'created', 'User'), {
      '409': 'exists',
      '422': 'invalid',
    }),
  },
  '/api/v1/users/{username}': {
    get: op('One user', 'admin', ok('user', 'User'), { '404': 'unknown user' }),
    patch: op('Change password, roles or disabled', 'admin', ok('user', 'User'), {
      '404': 'unknown user',
      '409': 'last admin',
    }),
    delete: op('Remove a user', 'admin', reply('204', 'removed'), {
      '404': 'unknown user',
      '409': 'last admin',
    }),
  },
  '/api/v1/audit': {
    get: op(
      'Audit log, newest first (by id)',
      'admin',
      ok('a page'),
      { '422': 'a query parameter is not valid (limit, cursor, action, actor)' },
      {
        parameters: [
          ...paging,
          query('action', { type: 'string' }),
          query('actor', { type: 'string' }),
        ],
      },
    ),
  },
  '/api/v1/audit/verify': {
    get: op(
      'Check the audit hash chain from its anchor to its head',
      'admin',
      ok('{ok, checked, unchained, anchor, head, broken?}'),
    ),
  },
  '/metrics': { get: open('Prometheus metrics', ok('text exposition')) },
});

let cached: Record<string, unknown> | undefined;

/** The OpenAPI 3.1 document, built from the same zod schemas the routes validate with. */
export function openApiDocument(version: string): Record<string, unknown> {
  if (cached) return { ...cached, info: { ...(cached.info as object), version } };
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'Trawl API',
      version,
      description:
        'Phishing analysis: submit emails, read verdicts, manage configuration. Any request whose Host header is outside TRUSTED_HOSTS answers 400 TRAWL_ERR_GATEWAY_UNTRUSTED_HOST (health checks excepted); every error is an RFC 9457 problem (ProblemDetails).',
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
        ForgetAnswer: schema(ForgetAnswer),
        FeedbackTeachers: schema(FeedbackTeachers),
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
        QuarantineRecord: schema(QuarantineRecord),
        QuarantineSubmit: schema(QuarantineSubmit),
        CreateWebhook: schema(CreateWebhook),
        UpdateWebhook: schema(UpdateWebhook),
        Webhook: schema(Webhook),
        NewWebhook: schema(Webhook.extend({ secret: z.string() })),
        CreateListEntry: schema(CreateListEntry),
        ChangePassword: schema(ChangePassword),
        PasswordChanged: schema(PasswordChanged),
        ListEntry: schema(ListEntry),
        ListEntries: schema(ListEntries),
      },
    },
    security: [{ bearer: [] }, { internalKey: [] }],
    paths,
  };
  return cached;
}
