-- Bounded feedback (issue 28): who taught the classifier what, conflicting labels, and forgetting.
--
-- feedback_labels: every analyst's latest label of a job, one row per (job, user), with the rank
-- of the role they held when they gave it (1 viewer, 2 analyst, 3 admin). What the classifier
-- learns of a job is decided from these rows (docs/feedback-and-webhooks.md, "Bounded feedback"):
-- the labels of the highest rank present, when they all agree; none when they disagree.
-- `forgotten`: removed from learning by `trawl learn --forget USER` (kept for the record).
CREATE TABLE feedback_labels (
  job_id     uuid NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
  given_by   text NOT NULL,
  rank       smallint NOT NULL CHECK (rank BETWEEN 1 AND 3),
  verdict    text NOT NULL CHECK (verdict IN ('phishing', 'legitimate')),
  given_at   timestamptz NOT NULL DEFAULT now(),
  forgotten  boolean NOT NULL DEFAULT false,
  PRIMARY KEY (job_id, given_by)
);
CREATE INDEX feedback_labels_by_idx ON feedback_labels (given_by);

-- job_feedback.learned_by: whose label is learnt from the job now (its share of the training);
-- held: why the analyst feedback is not learnt as given ('disputed': analysts of the same
-- rank disagree; 'capped': its teacher is at the share cap; 'outranked': a higher role's label is
-- learnt; 'forgotten': its labels were forgotten), so the catch-up does not retry it.
ALTER TABLE job_feedback
  ADD COLUMN learned_by text,
  ADD COLUMN held text CHECK (held IN ('disputed', 'capped', 'outranked', 'forgotten'));
CREATE INDEX job_feedback_learned_by_idx ON job_feedback (learned_by) WHERE learned_by IS NOT NULL;

-- Feedback given before: its giver's label (as an analyst), and what is learnt is theirs.
INSERT INTO feedback_labels (job_id, given_by, rank, verdict, given_at)
SELECT job_id, given_by, 2, verdict, given_at FROM job_feedback
WHERE source = 'analyst' AND given_by IS NOT NULL
ON CONFLICT DO NOTHING;
UPDATE job_feedback SET learned_by = given_by WHERE source = 'analyst' AND learned IS NOT NULL;

DROP INDEX job_feedback_unlearned_idx;
CREATE INDEX job_feedback_unlearned_idx ON job_feedback (given_at)
  WHERE source = 'analyst' AND learned IS DISTINCT FROM verdict AND held IS NULL;
