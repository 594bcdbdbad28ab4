-- Issue 58: the workers pointed at this database, as the machines page lists them. A worker
-- writes its row as it starts (after checking its machine: the kinds it takes and where its
-- models run), refreshes seen_at every few seconds while it runs (waiting or running a job),
-- and sets ended_at as it ends. A worker killed outright keeps its last seen_at: the page
-- tells it from a live one by that age. The name is jobs.worker's (host:pid); a later
-- process of the same name takes the row over. Never edit after it has landed.
CREATE TABLE workers (
    name       TEXT PRIMARY KEY,
    host       TEXT NOT NULL,
    kinds      TEXT NOT NULL,        -- the kinds it takes, comma-separated, as --kinds names them
    device     TEXT NOT NULL,        -- where its models run and why, in words
    started_at BIGINT NOT NULL,     -- ms since the epoch, as every time here
    seen_at    BIGINT NOT NULL,
    ended_at   BIGINT               -- NULL while it runs
);
