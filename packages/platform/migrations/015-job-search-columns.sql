-- Issue 29: the search kinds with few values (verdict, threat level, action, workflow, submitter)
-- are read from the job row instead of from term rows. Each was one `job_terms` row per finished
-- job (five of the ~26 a job wrote), for values that already live in the row: `result` holds the
-- verdict, threat level and action, `workflow_id` and `submitted_by` are columns. An index on each,
-- newest first, restricted to the finished jobs the terms covered (partial: a job's insert and its
-- claim add no entry, only the statement that finishes it), answers a search by one of them alone
-- a page at a time as the term index did; combined with a term, the term's index drives and the
-- row is checked.
--
-- Expression indexes rather than generated columns: adding a stored column rewrites every row of
-- `jobs` (migration 013 refused that for the same reason), while building an index only reads
-- them, and the jobs finished before this migration are searchable as soon as it is built (no
-- backfill, no window where the search must read both). The term rows of these kinds are then
-- removed: nothing reads them any more.
CREATE INDEX jobs_search_verdict_idx ON jobs ((result ->> 'is_phishing'), created_at DESC, job_id DESC)
  WHERE status = 'completed';
CREATE INDEX jobs_search_threat_idx ON jobs ((result ->> 'threat_level'), created_at DESC, job_id DESC)
  WHERE status = 'completed';
CREATE INDEX jobs_search_action_idx ON jobs ((result ->> 'recommended_action'), created_at DESC, job_id DESC)
  WHERE status = 'completed';
CREATE INDEX jobs_search_workflow_idx ON jobs (workflow_id, created_at DESC, job_id DESC)
  WHERE status IN ('completed', 'failed');
CREATE INDEX jobs_search_submitter_idx ON jobs (submitted_by, created_at DESC, job_id DESC)
  WHERE status IN ('completed', 'failed') AND submitted_by IS NOT NULL;
DELETE FROM job_terms WHERE kind IN ('phish', 'threat', 'action', 'wf', 'by');
