-- Issue 42: CrossFit's upstream learning queued from the machines page, as a third kind of job
-- (`upstream`): one partition's upstream learning into one model folder, whose worker then
-- queues the test tasks' seeds (crossfit jobs) and marks it done. Its key table,
-- upstream_jobs, holds the partition it learns, the folder it writes and the method name its
-- test tasks' runs are stored under; each folder and each method has one upstream job.
-- SQLite cannot change a CHECK in place, so `jobs` is rebuilt with the new kind, and with it
-- its two key tables (whose foreign keys name it). As in 20261127000018_jobs.sql, the runs'
-- references to grid_jobs are set aside while the old tables go and put back after. The new
-- tables are named *_next until the old ones are dropped; renaming jobs_next to jobs rewrites
-- the key tables' references to it. Never edit after it has landed.

CREATE TABLE jobs_next (
    id            INTEGER PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind IN ('grid', 'crossfit', 'upstream')),
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

CREATE TEMP TABLE runs_of_jobs AS
    SELECT id, grid_job_id FROM machine_runs WHERE grid_job_id IS NOT NULL;
UPDATE machine_runs SET grid_job_id = NULL WHERE grid_job_id IS NOT NULL;
DROP TABLE grid_jobs;
DROP TABLE crossfit_jobs;
DROP TABLE jobs;
ALTER TABLE jobs_next RENAME TO jobs;
ALTER TABLE grid_jobs_next RENAME TO grid_jobs;
ALTER TABLE crossfit_jobs_next RENAME TO crossfit_jobs;
UPDATE machine_runs SET grid_job_id = (SELECT r.grid_job_id FROM runs_of_jobs r WHERE r.id = machine_runs.id)
    WHERE id IN (SELECT id FROM runs_of_jobs);
DROP TABLE runs_of_jobs;
-- Workers look for claimable jobs of a kind.
CREATE INDEX jobs_claimable ON jobs(kind, status);

CREATE TABLE upstream_jobs (
    id           INTEGER PRIMARY KEY REFERENCES jobs(id),
    partition_id INTEGER NOT NULL REFERENCES crossfit_partitions(id),
    out_dir      TEXT NOT NULL UNIQUE,  -- the upstream model folder it writes
    method       TEXT NOT NULL UNIQUE   -- the method the test tasks' runs are stored under
);
