-- Quarantine release (issue 32): the original of each message the SMTP filter quarantined, kept so
-- that an analyst can deliver it to its recipients once, and who did. One row per (filter,
-- message): Postfix retrying the same bytes finds the row already there. `state` moves held ->
-- releasing (claimed by a release, `release_claimed_at`) -> released (delivered; the original is
-- dropped). A claim whose gateway died before the filter answered is taken again after a while;
-- a delivery the filter refused puts the row back to held. Who released it is also in the audit
-- log (`quarantine.release`).
CREATE TABLE quarantined_messages (
  id                 uuid PRIMARY KEY,
  retriever          text NOT NULL,
  message_ref        text NOT NULL,
  job_id             uuid,
  envelope_from      text NOT NULL,
  recipients         text[] NOT NULL,
  subject            text NOT NULL DEFAULT '',
  size               integer NOT NULL,
  -- the message as the filter received it, base64 (NULL once released)
  raw                text,
  quarantined_at     timestamptz NOT NULL DEFAULT now(),
  state              text NOT NULL DEFAULT 'held' CHECK (state IN ('held', 'releasing', 'released')),
  release_claimed_at timestamptz,
  released_at        timestamptz,
  released_by        text,
  UNIQUE (retriever, message_ref)
);
CREATE INDEX quarantined_messages_job_idx ON quarantined_messages (job_id);
CREATE INDEX quarantined_messages_time_idx ON quarantined_messages (quarantined_at DESC, id);
