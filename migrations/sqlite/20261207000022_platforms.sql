-- Issue 75: running a study on Prolific and MTurk from the dashboard. A study's publication on
-- a platform, the submissions read back from it, the researcher's decisions on them, and the
-- ledger of every call made to a platform. Each call is a job of a fourth kind (`platform`),
-- leased and retried like a learner's; its ledger row is its key table, written as an intent
-- with its idempotency key before anything is sent, and marked with the platform's answer
-- after. No credential is ever stored here: the operator gives them to `serve` (see
-- docs/src/platforms.md).
-- SQLite cannot change a CHECK in place, so `jobs` is rebuilt with the new kind, and with it
-- its three key tables (whose foreign keys name it), as in 20261127000019_upstream_jobs.sql:
-- the runs' references to grid_jobs are set aside while the old tables go and put back after;
-- renaming jobs_next to jobs rewrites the key tables' references to it. Never edit after it
-- has landed.

CREATE TABLE jobs_next (
    id            INTEGER PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind IN ('grid', 'crossfit', 'upstream', 'platform')),
    recipe_json   TEXT,             -- what any worker runs it with (JSON); NULL only for grid jobs queued before recipes
    status        TEXT NOT NULL CHECK (status IN ('queued', 'claimed', 'done', 'failed')),
    worker        TEXT,             -- who holds or last held it: host and process id
    lease_until   INTEGER,          -- unix ms; past it, another worker may claim it
    attempts      INTEGER NOT NULL DEFAULT 0,  -- claims so far
    error         TEXT,             -- why the last attempt failed
    queued_at     INTEGER NOT NULL, -- unix ms
    started_at    INTEGER,          -- unix ms: when the current claim began
    done_updates  INTEGER NOT NULL DEFAULT 0,  -- the current claim's progress: steps made ...
    total_updates INTEGER NOT NULL DEFAULT 0,  -- ... of all it will make
    progress      TEXT              -- the worker's last word, e.g. 'setting 2 of 9, update 300 of 1000'
);
INSERT INTO jobs_next SELECT id, kind, recipe_json, status, worker, lease_until, attempts, error,
    queued_at, started_at, done_updates, total_updates, progress FROM jobs;

CREATE TABLE grid_jobs_next (
    id      INTEGER PRIMARY KEY REFERENCES jobs_next(id),
    system  TEXT NOT NULL,     -- the system its run is stored under
    task_id INTEGER NOT NULL REFERENCES tasks(id),
    k       INTEGER NOT NULL CHECK (k >= 0),
    split   INTEGER NOT NULL CHECK (split >= 0),
    source  TEXT,              -- what to run when it is not the system itself: an evaluated model's folder
    UNIQUE (system, task_id, k, split)
);
INSERT INTO grid_jobs_next SELECT id, system, task_id, k, split, source FROM grid_jobs;

CREATE TABLE crossfit_jobs_next (
    id      INTEGER PRIMARY KEY REFERENCES jobs_next(id),
    method  TEXT NOT NULL,     -- the method its run is stored under
    task_id INTEGER NOT NULL REFERENCES crossfit_tasks(id),
    seed    INTEGER NOT NULL,
    UNIQUE (method, task_id, seed)
);
INSERT INTO crossfit_jobs_next SELECT id, method, task_id, seed FROM crossfit_jobs;

CREATE TABLE upstream_jobs_next (
    id           INTEGER PRIMARY KEY REFERENCES jobs_next(id),
    partition_id INTEGER NOT NULL REFERENCES crossfit_partitions(id),
    out_dir      TEXT NOT NULL UNIQUE,  -- the upstream model folder it writes
    method       TEXT NOT NULL UNIQUE   -- the method the test tasks' runs are stored under
);
INSERT INTO upstream_jobs_next SELECT id, partition_id, out_dir, method FROM upstream_jobs;

CREATE TEMP TABLE runs_of_jobs AS
    SELECT id, grid_job_id FROM machine_runs WHERE grid_job_id IS NOT NULL;
UPDATE machine_runs SET grid_job_id = NULL WHERE grid_job_id IS NOT NULL;
DROP TABLE grid_jobs;
DROP TABLE crossfit_jobs;
DROP TABLE upstream_jobs;
DROP TABLE jobs;
ALTER TABLE jobs_next RENAME TO jobs;
ALTER TABLE grid_jobs_next RENAME TO grid_jobs;
ALTER TABLE crossfit_jobs_next RENAME TO crossfit_jobs;
ALTER TABLE upstream_jobs_next RENAME TO upstream_jobs;
UPDATE machine_runs SET grid_job_id = (SELECT r.grid_job_id FROM runs_of_jobs r WHERE r.id = machine_runs.id)
    WHERE id IN (SELECT id FROM runs_of_jobs);
DROP TABLE runs_of_jobs;
-- Workers look for claimable jobs of a kind.
CREATE INDEX jobs_claimable ON jobs(kind, status);

-- A study's publication on one crowd platform (one per study): the draft the researcher
-- confirmed, and what the platform calls it once created. `places` is what the platform was
-- asked for so far: the plan's annotators x scenarios, plus one for each place the study
-- reclaimed (a worker who never finished) and asked for again.
CREATE TABLE platform_studies (
    study_id      INTEGER PRIMARY KEY REFERENCES studies(id),
    platform      TEXT NOT NULL CHECK (platform IN ('prolific', 'mturk')),
    sandbox       INTEGER NOT NULL CHECK (sandbox IN (0, 1)),  -- MTurk's sandbox; Prolific: 0
    draft_json    TEXT NOT NULL,    -- domain::platform::draft::Draft, as confirmed
    status        TEXT NOT NULL CHECK (status IN ('draft', 'published')),
    remote_id     TEXT,             -- Prolific's study id, MTurk's HIT id, once created
    remote_group  TEXT,             -- MTurk's HIT type id (its preview link)
    places        INTEGER NOT NULL CHECK (places >= 0),
    budget_cents  INTEGER NOT NULL CHECK (budget_cents >= 0),
    created_by    INTEGER REFERENCES users(id),
    created_at    INTEGER NOT NULL, -- unix ms, server clock
    published_at  INTEGER,          -- unix ms: when the publication was confirmed
    synced_at     INTEGER           -- unix ms: the last read of its submissions
);

-- The list of a task's workers on a platform: a Prolific participant group, an MTurk
-- qualification type. Every worker who starts any study of the task is put on it, and every
-- publication of the task excludes it, so each scenario gets workers new to the task. One per
-- task, platform and site (MTurk's live and sandbox).
CREATE TABLE platform_groups (
    task_id   INTEGER NOT NULL REFERENCES tasks(id),
    platform  TEXT NOT NULL CHECK (platform IN ('prolific', 'mturk')),
    sandbox   INTEGER NOT NULL CHECK (sandbox IN (0, 1)),
    remote_id TEXT NOT NULL,        -- the group's or qualification type's id
    PRIMARY KEY (task_id, platform, sandbox)
);

-- The submissions (Prolific) and assignments (MTurk) read back from a publication, as the
-- platform last said them.
CREATE TABLE platform_submissions (
    study_id     INTEGER NOT NULL REFERENCES studies(id),
    remote_id    TEXT NOT NULL,     -- Prolific's submission id, MTurk's assignment id
    worker       TEXT NOT NULL,     -- the platform's worker id
    status       TEXT NOT NULL CHECK (status IN ('active', 'submitted', 'approved', 'rejected', 'returned', 'timed_out')),
    started_at   INTEGER,           -- unix ms, as the platform says
    submitted_at INTEGER,           -- unix ms, as the platform says
    code         TEXT,              -- the completion code the worker entered (Prolific)
    seen_at      INTEGER NOT NULL,  -- unix ms, server clock: the last read
    PRIMARY KEY (study_id, remote_id)
);

-- The researcher's decision on a finished submission: approve (everyone who finished, by
-- default) or reject by a stated rule, with the words the worker reads. Stored when confirmed;
-- the approve and reject calls are planned from these rows, never from the report again.
CREATE TABLE platform_decisions (
    study_id   INTEGER NOT NULL REFERENCES studies(id),
    remote_id  TEXT NOT NULL,       -- the submission decided on
    decision   TEXT NOT NULL CHECK (decision IN ('approve', 'reject')),
    rule       TEXT,                -- a rejection's stated rule (domain::platform::decide::Rule)
    message    TEXT,                -- what the worker reads with a rejection
    decided_by INTEGER REFERENCES users(id),
    decided_at INTEGER NOT NULL,    -- unix ms, server clock
    PRIMARY KEY (study_id, remote_id)
);

-- The ledger: every call to a platform, one row and one job each (the job's id). Written as an
-- intent with its idempotency key before it is sent ('intent'); 'sent' once a send began, whose
-- answer may have been lost (a retry then reads what exists, or repeats the key); 'done' with
-- the platform's answer, or 'refused' with its refusal.
CREATE TABLE platform_actions (
    id           INTEGER PRIMARY KEY REFERENCES jobs(id),
    study_id     INTEGER NOT NULL REFERENCES studies(id),
    platform     TEXT NOT NULL CHECK (platform IN ('prolific', 'mturk')),
    sandbox      INTEGER NOT NULL CHECK (sandbox IN (0, 1)),
    action       TEXT NOT NULL,     -- domain::platform::ledger::Action
    idem_key     TEXT NOT NULL UNIQUE,  -- the idempotency key (MTurk's UniqueRequestToken)
    target       TEXT,              -- the submission, worker or publication it acts on
    amount_cents INTEGER NOT NULL DEFAULT 0,  -- what it may spend, the platform's fees included
    request_json TEXT NOT NULL,     -- what it sends (never a credential)
    state        TEXT NOT NULL CHECK (state IN ('intent', 'sent', 'done', 'refused')),
    remote_ref   TEXT,              -- a step's id between two calls (Prolific's bulk bonus)
    answer_json  TEXT,              -- the platform's answer or refusal
    next_try_at  INTEGER NOT NULL,  -- unix ms: not claimed before (a passing fault's wait)
    tries        INTEGER NOT NULL DEFAULT 0,  -- sends so far
    created_by   INTEGER REFERENCES users(id),
    created_at   INTEGER NOT NULL,  -- unix ms, server clock
    sent_at      INTEGER,           -- unix ms: the last send
    answered_at  INTEGER            -- unix ms: the answer
);
CREATE INDEX platform_actions_study ON platform_actions(study_id, id);
