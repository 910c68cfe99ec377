-- Retention purge (issue 15; docs/security.md "What is stored and for how long"). Each step of the
-- purge finds what it removes through an index, a bounded batch at a time, so that a run reads
-- only the rows it changes and never holds a lock for long.
--
-- Finished jobs whose body is still stored, oldest first. Only finished jobs are in it: a queued
-- job's insert and its claim add no entry (the hot path pays one index entry, at finish).
CREATE INDEX jobs_body_unpurged_idx ON jobs (created_at)
  WHERE body_purged_at IS NULL AND status IN ('completed', 'failed');
-- A job's search terms, found by the job's (created_at, job_id) when the job is deleted.
CREATE INDEX job_terms_job_idx ON job_terms (created_at, job_id);
-- Expired refresh tokens, oldest first.
CREATE INDEX refresh_tokens_expires_idx ON refresh_tokens (expires_at);

-- What a job keeps of its Email once the body is purged: the headers the evidence already shows
-- (subject, sender, recipients, date), attachment metadata without content, and an empty body,
-- so the stub is still an Email. A stored text that is not JSON (never written by Trawl) becomes
-- an empty object rather than stopping the purge.
CREATE FUNCTION trawl_purged_email(stored text) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  e jsonb;
BEGIN
  BEGIN
    e := stored::jsonb;
  EXCEPTION WHEN OTHERS THEN
    RETURN '{}';
  END;
  IF jsonb_typeof(e) <> 'object' THEN
    RETURN '{}';
  END IF;
  RETURN jsonb_strip_nulls(jsonb_build_object(
    'headers', CASE WHEN jsonb_typeof(e->'headers') = 'object'
                    THEN (e->'headers') - 'raw_headers' END,
    'body_text', '',
    'attachments', CASE WHEN jsonb_typeof(e->'attachments') = 'array' THEN (
        SELECT COALESCE(jsonb_agg(CASE WHEN jsonb_typeof(a) = 'object' THEN a - 'content'
                                       ELSE '{}'::jsonb END), '[]'::jsonb)
        FROM jsonb_array_elements(e->'attachments') AS a) END,
    'language', e->'language',
    'source', e->'source'
  ))::text;
END
$$;
