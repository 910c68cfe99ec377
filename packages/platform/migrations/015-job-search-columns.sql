-- Issue 29: the search kinds with few values (verdict, threat level, action, workflow, submitter)
-- are read from the job row instead of from term rows. Each was one `job_terms` row per finished
-- job (five of the ~26 a job wrote), for values the row already holds: `result` has the verdict,
-- threat level and action, `workflow_id` and `submitted_by` are columns.
--
-- The three values of `result` become stored generated columns (null until the job completes), so
-- that an index holds them as plain values: a search that combines them with a term checks each
-- candidate by a probe of that index, as it probed `job_terms` before, instead of reading the job
-- row and its jsonb result (about four times dearer per candidate on a million jobs: ADR 020).
-- Adding them rewrites `jobs` once, in this migration (minutes on millions of jobs, with the table
-- locked): every job stored before it gets its values, so nothing needs a backfill and no search
-- reads both places. Each index is partial, newest first, restricted to the finished jobs the
-- terms covered: a job's insert and its claim add no entry, only the statement that finishes it.
-- The term rows of these kinds are then removed: nothing reads them any more.
ALTER TABLE jobs
  ADD COLUMN search_phishing boolean GENERATED ALWAYS AS (
    CASE WHEN status = 'completed' THEN (result -> 'is_phishing') = 'true'::jsonb END) STORED,
  ADD COLUMN search_threat text GENERATED ALWAYS AS (
    CASE WHEN status = 'completed' THEN result ->> 'threat_level' END) STORED,
  ADD COLUMN search_action text GENERATED ALWAYS AS (
    CASE WHEN status = 'completed' THEN result ->> 'recommended_action' END) STORED;
CREATE INDEX jobs_search_verdict_idx ON jobs (search_phishing, created_at DESC, job_id DESC)
  WHERE search_phishing IS NOT NULL;
CREATE INDEX jobs_search_threat_idx ON jobs (search_threat, created_at DESC, job_id DESC)
  WHERE search_threat IS NOT NULL;
CREATE INDEX jobs_search_action_idx ON jobs (search_action, created_at DESC, job_id DESC)
  WHERE search_action IS NOT NULL;
CREATE INDEX jobs_search_workflow_idx ON jobs (workflow_id, created_at DESC, job_id DESC)
  WHERE status IN ('completed', 'failed');
CREATE INDEX jobs_search_submitter_idx ON jobs (submitted_by, created_at DESC, job_id DESC)
  WHERE status IN ('completed', 'failed') AND submitted_by IS NOT NULL;
DELETE FROM job_terms WHERE kind IN ('phish', 'threat', 'action', 'wf', 'by');
