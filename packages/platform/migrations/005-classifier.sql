-- The learnt text classifier (issue 17): one row of totals (messages learnt per class, the
-- tokeniser that produced the tokens, a version that moves on with every change) and one row per
-- token (a hash of an OSB feature, 30 bits today; services/analyzers/src/classifier) with the
-- number of learnt phishing and legitimate messages it appeared in. A token that no message holds
-- any more is deleted.
CREATE TABLE classifier_state (
  id                 smallint PRIMARY KEY CHECK (id = 1),
  version            bigint NOT NULL DEFAULT 0,
  tokenizer          text NOT NULL DEFAULT '',
  phishing_messages  integer NOT NULL DEFAULT 0 CHECK (phishing_messages >= 0),
  ham_messages       integer NOT NULL DEFAULT 0 CHECK (ham_messages >= 0),
  updated_at         timestamptz NOT NULL DEFAULT now()
);
INSERT INTO classifier_state (id) VALUES (1);

CREATE TABLE classifier_tokens (
  token     bigint PRIMARY KEY,
  phishing  integer NOT NULL DEFAULT 0,
  ham       integer NOT NULL DEFAULT 0
);
