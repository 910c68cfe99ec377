-- The job row keeps the submitted Email as the JSON text the gateway already produced (ADR 004):
-- no jsonb parse on insert and, where the server has it, lz4 instead of pglz for the TOASTed value.
-- Readers parse it as before (jsonb came back parsed, text comes back as a string: rows.json()).
ALTER TABLE jobs ALTER COLUMN email TYPE text USING email::text;
DO $$
BEGIN
  ALTER TABLE jobs ALTER COLUMN email SET COMPRESSION lz4;
EXCEPTION WHEN OTHERS THEN
  NULL; -- a server built without lz4 keeps its default compression
END
$$;
