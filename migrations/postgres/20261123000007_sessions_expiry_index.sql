-- PostgreSQL twin of migrations/sqlite/20261123000007_sessions_expiry_index.sql: the same tables, columns, constraints and
-- meaning (INTEGER is BIGINT, REAL is DOUBLE PRECISION, rowid keys are identity columns, flags
-- stay 0/1 integers, times stay ISO text or unix numbers). Never edit after it has landed.

-- Every new session deletes the expired ones (`DELETE FROM sessions WHERE expires_at <= ?`),
-- which happens on each sign-in and each crowd arrival: without an index that is a scan of
-- the whole table on a hot path.
CREATE INDEX sessions_expires ON sessions(expires_at);
