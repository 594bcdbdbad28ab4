-- Issue 29: a model grid shared by many machines. A grid job is one shot group of a task for
-- one system (the fine-tuned baseline: train, export, evaluate, store), or every shot group
-- of a task at once (k = split = 0: the frozen baseline, whose heads share one encoder pass),
-- or one model folder to evaluate (`eval --plan`). Any number of worker
-- processes, on any machine pointed at the database, claim the next queued job, hold it by a
-- lease that they renew while they work (a heartbeat), and store its run; a job whose lease
-- ran out (its worker was killed or lost the database) is claimed again by another worker,
-- and the runs the first worker had opened are marked failed. Each job is stored exactly once:
-- a worker stores its runs only while it still holds the job's lease, in the same transaction
-- that marks the job done. Never edit after it has landed.
CREATE TABLE grid_jobs (
    id           INTEGER PRIMARY KEY,
    system       TEXT NOT NULL,                    -- the system its run is stored under
    task_id      INTEGER NOT NULL REFERENCES tasks(id),
    k            INTEGER NOT NULL CHECK (k >= 0),
    split        INTEGER NOT NULL CHECK (split >= 0),
    source       TEXT,                             -- what to run when it is not the system itself: an evaluated model's folder
    status       TEXT NOT NULL CHECK (status IN ('queued', 'claimed', 'done', 'failed')),
    worker       TEXT,                             -- who holds or last held it: host and process id
    lease_until  INTEGER,                          -- unix ms; past it, another worker may claim it
    attempts     INTEGER NOT NULL DEFAULT 0,       -- claims so far
    error        TEXT,                             -- why the last attempt failed
    queued_at    INTEGER NOT NULL,                 -- unix ms
    UNIQUE (system, task_id, k, split)
);
-- Workers look for claimable jobs of a system.
CREATE INDEX grid_jobs_claimable ON grid_jobs(system, status);

-- The grid job a run belongs to (NULL for a run outside a shared grid): a job's runs, and the
-- worker running them, are found through it.
ALTER TABLE machine_runs ADD COLUMN grid_job_id INTEGER REFERENCES grid_jobs(id);
