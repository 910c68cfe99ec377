-- Feedback on verdicts and webhooks (issue 17).
--
-- job_feedback: one row per (job, source). `analyst` feedback (POST /analyze/{id}/feedback) trains
-- the classifier; `reporter` (a mailbox user's report) is reserved for reported-mail triage, kept
-- apart and never trained on. `learned` is the label currently learnt into the classifier from
-- this row (null: none); learning moves it to `verdict`, so a repeat does nothing and a change
-- unlearns the old label first.
CREATE TABLE job_feedback (
  job_id    uuid NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
  source    text NOT NULL CHECK (source IN ('analyst', 'reporter')),
  verdict   text NOT NULL CHECK (verdict IN ('phishing', 'legitimate')),
  note      text,
  given_by  text,
  given_at  timestamptz NOT NULL DEFAULT now(),
  learned   text CHECK (learned IN ('phishing', 'legitimate')),
  PRIMARY KEY (job_id, source)
);
CREATE INDEX job_feedback_unlearned_idx ON job_feedback (given_at)
  WHERE source = 'analyst' AND learned IS DISTINCT FROM verdict;

-- Webhook endpoints registered by admins. `secret` is the whole `whsec_<base64>` string (shown
-- once, when created). `failing_since`: the first failed attempt since the last success; an
-- endpoint failing for a day is disabled (`disabled_reason`).
CREATE TABLE webhook_endpoints (
  id               uuid PRIMARY KEY,
  url              text NOT NULL,
  events           text[] NOT NULL,
  secret           text NOT NULL,
  enabled          boolean NOT NULL DEFAULT true,
  description      text,
  created_by       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  failing_since    timestamptz,
  disabled_reason  text
);

-- One row per event that at least one enabled endpoint subscribed to when it happened; `payload`
-- is the body sent (`{type, timestamp, data}`), the same for every attempt and endpoint.
CREATE TABLE webhook_events (
  id          text PRIMARY KEY,
  type        text NOT NULL,
  payload     jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
-- the dispatchers' purge of old events (with their deliveries and attempts)
CREATE INDEX webhook_events_created_idx ON webhook_events (created_at);

-- The outbox: one row per (event, endpoint), claimed by the dispatchers with FOR UPDATE SKIP
-- LOCKED. A claim moves next_attempt_at past a lease, so a dispatcher that dies mid-send leaves
-- the row to be claimed again when the lease ends (at least once).
CREATE TABLE webhook_deliveries (
  id               bigserial PRIMARY KEY,
  event_id         text NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
  endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  created_at       timestamptz NOT NULL DEFAULT now(),
  last_attempt_at  timestamptz,
  delivered_at     timestamptz,
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at)
  WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id);

-- The delivery log: every attempt, with the receiver's status code or the error.
CREATE TABLE webhook_attempts (
  id           bigserial PRIMARY KEY,
  delivery_id  bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  endpoint_id  uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  attempt      integer NOT NULL,
  at           timestamptz NOT NULL DEFAULT now(),
  status_code  integer,
  error        text,
  duration_ms  integer NOT NULL
);
CREATE INDEX webhook_attempts_endpoint_idx ON webhook_attempts (endpoint_id, id DESC);
