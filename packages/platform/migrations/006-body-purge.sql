-- Retention (issue 15): when the retention purge removes a finished job's message body, the job
-- keeps its verdict, evidence and trace; `email` keeps only what the evidence already shows, and
-- `body_purged_at` records when the body went, so the message view can answer that it is gone.
ALTER TABLE jobs ADD COLUMN body_purged_at timestamptz;
