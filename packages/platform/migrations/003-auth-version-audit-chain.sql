-- Revocation that takes effect (docs/security.md): every change of a user's access (roles, disabled,
-- password) adds 1 to auth_version; an access token carries the version it was issued at and is
-- refused once the user's version moved on (or the user is gone or disabled).
ALTER TABLE users ADD COLUMN auth_version integer NOT NULL DEFAULT 1;

-- Tamper-evident audit log: each row carries the hash of the row before it (prev_hash) and its own
-- (hash = sha256 of its content and prev_hash). audit_chain holds the chain's two ends: the anchor
-- (the last row outside the chain: purged by retention, or written before this migration) and the
-- head (the last row appended). Appends lock the audit_chain row, so the chain is one sequence
-- across every replica.
ALTER TABLE audit_log ADD COLUMN prev_hash text;
ALTER TABLE audit_log ADD COLUMN hash text;
CREATE TABLE audit_chain (
  id          smallint PRIMARY KEY CHECK (id = 1),
  anchor_id   bigint NOT NULL,
  anchor_hash text NOT NULL,
  head_id     bigint NOT NULL,
  head_hash   text NOT NULL
);
INSERT INTO audit_chain (id, anchor_id, anchor_hash, head_id, head_hash)
SELECT 1, COALESCE(max(id), 0), repeat('0', 64), COALESCE(max(id), 0), repeat('0', 64)
FROM audit_log;
-- the retention purge looks rows up by time
CREATE INDEX audit_log_at_idx ON audit_log (at);
