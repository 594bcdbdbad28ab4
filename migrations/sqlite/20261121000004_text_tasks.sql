-- Human studies of CrossFit text-to-text tasks with a free-text answer box. A CrossFit task is
-- copied into `tasks`/`examples` (context = input, question empty, gold = the outputs) so that
-- the whole crowd protocol works on it unchanged. Such a task carries its metric here; the
-- foundation's CHECK on `tasks.family` cannot be widened in SQLite without rebuilding a table
-- that others reference, so these rows keep family 'classification' in the column and are read
-- as the text-to-text family wherever `text_metric` is set.
-- Never edit after it has landed: add a new migration instead.
ALTER TABLE tasks ADD COLUMN text_metric TEXT;  -- CrossFit metric name; NULL for CLUES tasks
