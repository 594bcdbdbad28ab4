-- Every new session deletes the expired ones (`DELETE FROM sessions WHERE expires_at <= ?`),
-- which happens on each sign-in and each crowd arrival: without an index that is a scan of
-- the whole table on a hot path.
CREATE INDEX sessions_expires ON sessions(expires_at);
