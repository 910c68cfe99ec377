-- Issue 32: a jobs list an analyst can read, and the allow and block lists.
--
-- What the list shows of a message, written by the statement that creates the job (the gateway
-- has the Email then): its subject, From address and display name, the first three recipients and
-- how many there are. A page of the list reads these columns and never the message or the
-- evidence. Jobs stored before this migration keep them null (the list shows no subject for them):
-- filling them would rewrite every row of a large table in one statement.
ALTER TABLE jobs
  ADD COLUMN subject text,
  ADD COLUMN sender text,
  ADD COLUMN sender_name text,
  ADD COLUMN recipients jsonb,
  ADD COLUMN recipient_count integer;

-- The organisation's allow and block lists (docs/analyzers.md#allow-and-block-lists): one row per
-- (list, kind, value). The analyzers hold every live entry in memory and read the table again when
-- told that it changed (control event `lists.changed`), never once per job; an expired entry stays
-- in the table (the console shows it) and is ignored from `expires_at` on.
CREATE TABLE list_entries (
  id          uuid PRIMARY KEY,
  list        text NOT NULL CHECK (list IN ('allow', 'block')),
  kind        text NOT NULL CHECK (kind IN ('sender', 'sender_domain', 'url_host', 'sha256')),
  value       text NOT NULL,
  note        text,
  created_by  text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz,
  UNIQUE (list, kind, value)
);
CREATE INDEX list_entries_created_idx ON list_entries (created_at DESC, id DESC);
