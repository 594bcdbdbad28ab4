-- Issue 39: each study's analysis plan, frozen when its first worker arrives: the family of
-- scenario comparisons (Holm's adjustment applies within it), the primary comparison, the
-- level, the planned annotators and items, and the exclusion rules, as JSON with the SHA-256
-- of that exact text. Pre-registration inside the tool: the report and the bundle show the plan
-- and its hash, and a study whose workers arrived before this table existed has no plan, so
-- its comparisons are exploratory.
-- And the workers `load fill` makes for load runs are marked, so that no report counts them
-- unless asked to.
-- Never edit after it has landed.
CREATE TABLE analysis_plans (
    study_id  INTEGER PRIMARY KEY REFERENCES studies(id),
    plan_json TEXT NOT NULL,     -- the plan as frozen: the exact text hashed
    sha256    TEXT NOT NULL,     -- hex SHA-256 of plan_json
    frozen_at INTEGER NOT NULL   -- unix milliseconds: the first worker's arrival
);
ALTER TABLE assignments ADD COLUMN synthetic INTEGER NOT NULL DEFAULT 0;  -- 1: made by `load fill`
