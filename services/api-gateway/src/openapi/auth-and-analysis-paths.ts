import {
  ANALYSTS,
  binary,
  body,
  type Json,
  ok,
  op,
  open,
  PURGED,
  paging,
  problems,
  query,
  READERS,
  ref,
  reply,
  SUBMITTERS,
} from './operations.ts';

/** The paths of the API's health, authentication, submission and jobs, campaigns. */
export const authAndAnalysisPaths: Record<string, Record<string, Json>> = {
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
};
