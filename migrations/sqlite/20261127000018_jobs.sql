-- Issue 41: one job queue. What every kind of job shares (its kind, recipe, lease and
-- progress) is one table, `jobs`, which one set of fixed statements claims, renews, hands
-- back, cancels and completes (store::lease). Each kind keeps a table of its own, whose id is
-- the job's, for its key, its foreign keys and its uniqueness: grid_jobs (a task's shot group
-- for a system; machine_runs.grid_job_id still points at it) and crossfit_jobs (a CrossFit
-- task's seed for a method). Grid jobs keep their ids; CrossFit jobs are numbered after them.
-- SQLite cannot add a foreign key to a table, so both tables are rebuilt. The runs' references
-- to grid_jobs are set aside while the old table goes (dropping a parent that children point
-- at fails, and deferring the check does not help: SQLite counts the violation when the old
-- rows go and never uncounts it) and put back once the rebuilt table holds the same ids.
-- Never edit after it has landed.

CREATE TABLE jobs (
    id            INTEGER PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind IN ('grid', 'crossfit')),
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
INSERT INTO jobs (id, kind, recipe_json, status, worker, lease_until, attempts, error, queued_at)
    SELECT id, 'grid', recipe_json, status, worker, lease_until, attempts, error, queued_at
    FROM grid_jobs;
INSERT INTO jobs (id, kind, recipe_json, status, worker, lease_until, attempts, error, queued_at,
                  started_at, done_updates, total_updates, progress)
    SELECT id + (SELECT COALESCE(MAX(id), 0) FROM grid_jobs), 'crossfit', settings_json, status,
           worker, lease_until, attempts, error, queued_at, started_at, done_updates,
           total_updates, progress
    FROM crossfit_jobs;
-- Workers look for claimable jobs of a kind.
CREATE INDEX jobs_claimable ON jobs(kind, status);

CREATE TABLE grid_jobs_keyed (
    id      INTEGER PRIMARY KEY REFERENCES jobs(id),
    system  TEXT NOT NULL,     -- the system its run is stored under
    task_id INTEGER NOT NULL REFERENCES tasks(id),
    k       INTEGER NOT NULL CHECK (k >= 0),
    split   INTEGER NOT NULL CHECK (split >= 0),
    source  TEXT,              -- what to run when it is not the system itself: an evaluated model's folder
    UNIQUE (system, task_id, k, split)
);
INSERT INTO grid_jobs_keyed (id, system, task_id, k, split, source)
    SELECT id, system, task_id, k, split, source FROM grid_jobs;

CREATE TABLE crossfit_jobs_keyed (
    id      INTEGER PRIMARY KEY REFERENCES jobs(id),
    method  TEXT NOT NULL,     -- the method its run is stored under
    task_id INTEGER NOT NULL REFERENCES crossfit_tasks(id),
    seed    INTEGER NOT NULL,
    UNIQUE (method, task_id, seed)
);
INSERT INTO crossfit_jobs_keyed (id, method, task_id, seed)
    SELECT id + (SELECT COALESCE(MAX(id), 0) FROM grid_jobs), method, task_id, seed
    FROM crossfit_jobs;

CREATE TEMP TABLE runs_of_jobs AS
    SELECT id, grid_job_id FROM machine_runs WHERE grid_job_id IS NOT NULL;
UPDATE machine_runs SET grid_job_id = NULL WHERE grid_job_id IS NOT NULL;
DROP TABLE grid_jobs;
ALTER TABLE grid_jobs_keyed RENAME TO grid_jobs;
UPDATE machine_runs SET grid_job_id = (SELECT r.grid_job_id FROM runs_of_jobs r WHERE r.id = machine_runs.id)
    WHERE id IN (SELECT id FROM runs_of_jobs);
DROP TABLE runs_of_jobs;
DROP TABLE crossfit_jobs;
ALTER TABLE crossfit_jobs_keyed RENAME TO crossfit_jobs;
