import {
  ANALYSTS,
  body,
  type Json,
  ok,
  op,
  open,
  paging,
  query,
  READERS,
  reply,
} from './operations.ts';

/**
 * The paths of the API's administration: configuration, workflows, system, feedback, quarantine,
 * webhooks, lists, users, audit, metrics.
 */
export const administrationPaths: Record<string, Record<string, Json>> = {
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
};
