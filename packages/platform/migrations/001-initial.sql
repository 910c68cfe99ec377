-- Trawl schema, version 1. Applied by `pnpm db:migrate` and by the embedded mode at start.

CREATE TABLE jobs (
  job_id         uuid PRIMARY KEY,
  email_id       text NOT NULL,
  workflow_id    text NOT NULL,
  status         text NOT NULL CHECK (status IN ('queued', 'processing', 'completed', 'failed')),
  email          jsonb NOT NULL,
  result         jsonb,
  error          jsonb,
  trace          jsonb,
  config_version text,
  submitted_by   text,
  origin         jsonb,
  created_at     timestamptz NOT NULL DEFAULT now(),
  started_at     timestamptz,
  completed_at   timestamptz,
  deadline_at    timestamptz,
  attempts       integer NOT NULL DEFAULT 0
);
-- listing, newest first, all jobs or one status
CREATE INDEX jobs_created_idx ON jobs (created_at DESC, job_id DESC);
CREATE INDEX jobs_status_created_idx ON jobs (status, created_at DESC, job_id DESC);
-- the reaper's lookup of jobs processing past their deadline
CREATE INDEX jobs_processing_deadline_idx ON jobs (deadline_at) WHERE status = 'processing';
CREATE INDEX jobs_email_id_idx ON jobs (email_id);

CREATE TABLE users (
  username      text PRIMARY KEY,
  password_hash text NOT NULL,
  roles         jsonb NOT NULL DEFAULT '[]'::jsonb,
  disabled      boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE refresh_tokens (
  token_hash text PRIMARY KEY,
  username   text NOT NULL,
  family_id  text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at    timestamptz,
  revoked_at timestamptz
);
CREATE INDEX refresh_tokens_family_idx ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_username_idx ON refresh_tokens (username);

CREATE TABLE audit_log (
  id         bigserial PRIMARY KEY,
  at         timestamptz NOT NULL DEFAULT now(),
  actor      text,
  action     text NOT NULL,
  target     text,
  outcome    text NOT NULL CHECK (outcome IN ('success', 'failure')),
  address    text,
  request_id text,
  details    jsonb
);
CREATE INDEX audit_log_action_idx ON audit_log (action, id DESC);
CREATE INDEX audit_log_actor_idx ON audit_log (actor, id DESC);

CREATE TABLE config_versions (
  version        text PRIMARY KEY,
  service_yaml   text NOT NULL,
  workflows_yaml text NOT NULL,
  actor          text,
  created_at     timestamptz NOT NULL DEFAULT now(),
  recorded_at    timestamptz NOT NULL DEFAULT now(),
  seq            bigserial
);
CREATE INDEX config_versions_recorded_idx ON config_versions (seq DESC);

CREATE TABLE sender_history (
  address        text PRIMARY KEY,
  domain         text NOT NULL,
  first_seen     timestamptz NOT NULL,
  last_seen      timestamptz NOT NULL,
  message_count  integer NOT NULL DEFAULT 0,
  phishing_count integer NOT NULL DEFAULT 0
);
CREATE INDEX sender_history_domain_idx ON sender_history (domain);
