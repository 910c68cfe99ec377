-- Job search (issue 16): a finished job is indexed by terms, one row per (kind, value) of the job:
-- sender and its domain, recipients and their domains, subject words, URL hosts and registrable
-- domains, attachment sha256, indicator types, verdict, threat level, action, workflow, submitter
-- (kinds in @trawl/contracts job-search.ts). The key carries the job's created_at and id, so one
-- term's jobs are read newest first straight from the index, a page at a time; the other terms of
-- a search are point lookups on the same key. Insert-only (written once, when the job finishes):
-- no index is added to `jobs`, whose rows are updated on the hot path.
CREATE TABLE job_terms (
  kind       text NOT NULL,
  value      text NOT NULL,
  created_at timestamptz NOT NULL,
  job_id     uuid NOT NULL,
  PRIMARY KEY (kind, value, created_at, job_id)
);
