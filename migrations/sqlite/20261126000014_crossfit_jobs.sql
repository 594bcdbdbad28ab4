-- Issue 28: CrossFit's learning (`crossfit learn`, and the fine-tuning on each test task after
-- `crossfit upstream`) shared by many machines, as the CLUES track's grid is (grid_jobs): a job
-- is one method's fine-tuning of one CrossFit task for one seed. Workers claim the next queued
-- job under a lease they renew while they work, write their progress on the job, and store its
-- run (crossfit_runs) only while they still hold the lease, in the same transaction that marks
-- the job done; a job whose lease ran out is claimed again by another worker, from the start.
-- Never edit after it has landed.
CREATE TABLE crossfit_jobs (
    id            INTEGER PRIMARY KEY,
    method        TEXT NOT NULL,                  -- the method its run is stored under
    task_id       INTEGER NOT NULL REFERENCES crossfit_tasks(id),
    seed          INTEGER NOT NULL,
    settings_json TEXT NOT NULL,                  -- the recipe every worker runs it with: model folder, grid, lengths, upstream learning
    status        TEXT NOT NULL CHECK (status IN ('queued', 'claimed', 'done', 'failed')),
    worker        TEXT,                           -- who holds or last held it: host and process id
    lease_until   INTEGER,                        -- unix ms; past it, another worker may claim it
    attempts      INTEGER NOT NULL DEFAULT 0,     -- claims so far
    error         TEXT,                           -- why the last attempt failed
    queued_at     INTEGER NOT NULL,               -- unix ms
    started_at    INTEGER,                        -- unix ms: when the current claim began
    done_updates  INTEGER NOT NULL DEFAULT 0,     -- the current claim's progress: updates made ...
    total_updates INTEGER NOT NULL DEFAULT 0,     -- ... of all the grid's settings together
    progress      TEXT,                           -- the worker's last word, e.g. 'setting 2 of 9, update 300 of 1000'
    UNIQUE (method, task_id, seed)
);
-- Workers look for claimable jobs; the models page sums the jobs up by method and status.
CREATE INDEX crossfit_jobs_claimable ON crossfit_jobs(method, status);
