-- Campaigns (issue 16): messages that share their lure are grouped. When a suspicious job finishes,
-- the orchestrator writes its lure keys (registrable domains of its URLs, exact URLs on big
-- platforms, attachment sha256, bands of a MinHash signature of its text; services/analyzer-orchestrator/src/
-- campaigns.ts) to `lure_keys`; a job whose key another job already holds joins that job's campaign
-- (or both start one). A job belongs to at most one campaign; campaigns that a job links are merged
-- into the oldest. Recipients and reporters are kept per campaign, one row each, so that the
-- counts on `campaigns` move on by what a new member adds, never by a recount of all members.
CREATE TABLE campaigns (
  id            uuid PRIMARY KEY,
  created_at    timestamptz NOT NULL DEFAULT now(),
  last_seen_at  timestamptz NOT NULL DEFAULT now(),
  size          integer NOT NULL DEFAULT 0,
  recipients    integer NOT NULL DEFAULT 0,
  reporters     integer NOT NULL DEFAULT 0,
  -- the subject of the message that started it, and the kinds of lure its members share
  subject       text NOT NULL DEFAULT '',
  lures         jsonb NOT NULL DEFAULT '[]'::jsonb
);
-- the list: newest activity first
CREATE INDEX campaigns_activity_idx ON campaigns (last_seen_at DESC, id DESC);

-- a job deleted by the retention purge leaves its campaign (the counts keep what it reached)
CREATE TABLE campaign_members (
  job_id       uuid PRIMARY KEY REFERENCES jobs (job_id) ON DELETE CASCADE,
  campaign_id  uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  joined_at    timestamptz NOT NULL DEFAULT now(),
  -- the lure key that brought it in (`dom:…`, `url:…`, `sha:…`, `txt`)
  matched      text NOT NULL DEFAULT '',
  recipients   jsonb NOT NULL DEFAULT '[]'::jsonb,
  reporter     text
);
CREATE INDEX campaign_members_campaign_idx ON campaign_members (campaign_id, joined_at DESC, job_id);

CREATE TABLE campaign_recipients (
  campaign_id  uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  address      text NOT NULL,
  PRIMARY KEY (campaign_id, address)
);

CREATE TABLE campaign_reporters (
  campaign_id  uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  address      text NOT NULL,
  PRIMARY KEY (campaign_id, address)
);

-- The lure keys of every suspicious job (insert-only). A text key `txt<band>:…` carries the job's
-- whole MinHash signature (`signature`, 32 values as 256 hex digits), so that a band match is
-- confirmed by the similarity of the whole texts.
CREATE TABLE lure_keys (
  key      text NOT NULL,
  job_id   uuid NOT NULL,
  signature  text,
  PRIMARY KEY (key, job_id)
);
