-- A completed job's evidence (issue 16) in a column of its own, as the JSON text the orchestrator
-- wrote. Inside `result` (jsonb) it was most of the result (about 4.8 of 5.7 KB a job) and
-- PostgreSQL parsed it into jsonb on every finish, although nothing queries into it on the hot
-- path: the finish statement cost about 0.25 ms more a job with it there (docs/benchmarks.md).
-- Jobs finished before this migration keep their evidence inside `result`; readers take the column
-- when it is set, else `result->'evidence'`.
ALTER TABLE jobs ADD COLUMN evidence text;
