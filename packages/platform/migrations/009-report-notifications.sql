-- Reporter notifications (issue 17): one row per reported job whose reporter Trawl answers by email.
-- The row is the durable "sent once" record: a notifier claims it (state 'sending', claimed_at),
-- sends, and marks it 'sent'; a redelivered verdict event finds it 'sent' and sends nothing. A claim
-- older than the notifier's stale time (its process died between the claim and the record) is
-- taken again, so a crash never loses a notification (at worst one is sent twice, with the same
-- Message-ID). 'failed' rows (the relay refused it) are retried by the next delivery of the event.
CREATE TABLE report_notifications (
  job_id      uuid PRIMARY KEY REFERENCES jobs (job_id) ON DELETE CASCADE,
  reporter    text NOT NULL,
  state       text NOT NULL CHECK (state IN ('sending', 'sent', 'failed')),
  attempts    integer NOT NULL DEFAULT 1,
  claimed_at  timestamptz NOT NULL DEFAULT now(),
  sent_at     timestamptz,
  message_id  text NOT NULL,
  error       text
);
