-- PostgreSQL twin of migrations/sqlite/20261123000008_machine_probability.sql: the same tables, columns, constraints and
-- meaning (INTEGER is BIGINT, REAL is DOUBLE PRECISION, rowid keys are identity columns, flags
-- stay 0/1 integers, times stay ISO text or unix numbers). Never edit after it has landed.

-- The probability a model gave its answer to an item: a softmax over the answers it chose
-- among ("no answer" included for span tasks), shown beside the crowd's stated confidence in
-- the reliability diagram. NULL for imported predictions and for runs stored before this.
ALTER TABLE machine_predictions ADD COLUMN probability DOUBLE PRECISION
    CHECK (probability IS NULL OR (probability >= 0 AND probability <= 1));
