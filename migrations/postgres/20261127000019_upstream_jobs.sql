-- Issue 42: CrossFit's upstream learning queued from the machines page, as a third kind of job
-- (`upstream`): one partition's upstream learning into one model folder, whose worker then
-- queues the test tasks' seeds (crossfit jobs) and marks it done. Its key table,
-- upstream_jobs, holds the partition it learns, the folder it writes and the method name its
-- test tasks' runs are stored under; each folder and each method has one upstream job.
-- Never edit after it has landed.
ALTER TABLE jobs DROP CONSTRAINT jobs_kind_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_kind_check CHECK (kind IN ('grid', 'crossfit', 'upstream'));

CREATE TABLE upstream_jobs (
    id           BIGINT PRIMARY KEY REFERENCES jobs(id),
    partition_id BIGINT NOT NULL REFERENCES crossfit_partitions(id),
    out_dir      TEXT NOT NULL UNIQUE,  -- the upstream model folder it writes
    method       TEXT NOT NULL UNIQUE   -- the method the test tasks' runs are stored under
);
