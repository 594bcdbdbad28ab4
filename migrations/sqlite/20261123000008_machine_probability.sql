-- The probability a model gave its answer to an item: a softmax over the answers it chose
-- among ("no answer" included for span tasks), shown beside the crowd's stated confidence in
-- the reliability diagram. NULL for imported predictions and for runs stored before this.
ALTER TABLE machine_predictions ADD COLUMN probability REAL
    CHECK (probability IS NULL OR (probability >= 0 AND probability <= 1));
