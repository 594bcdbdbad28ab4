-- CrossFit text-to-text tasks (Ye et al.) beside the CLUES tasks: files in CrossFit's layout and
-- their examples, each task's ontology path and metric (editable), task partitions, and runs
-- (one method's predictions on one task's test file of one seed), scored when read.
-- Never edit after it has landed: add a new migration instead.

CREATE TABLE crossfit_tasks (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,   -- the file names without their last three `_` parts
    ontology    TEXT NOT NULL,          -- e.g. 'cls/sentiment analysis', 'cg/summarization'
    metric      TEXT NOT NULL,          -- CrossFit's name: ACC, Classification-F1, QA-F1, EM, Rouge-L, Matthew-Correlation, Pearson-Correlation
    source      TEXT NOT NULL CHECK (source IN ('crossfit', 'sampled', 'demo')),
    imported_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- Every file, with its hash: an identical re-import changes nothing, a different file for an
-- imported task is refused.
CREATE TABLE crossfit_files (
    id        INTEGER PRIMARY KEY,
    task_id   INTEGER NOT NULL REFERENCES crossfit_tasks(id),
    file_name TEXT NOT NULL,            -- <task>_<k>_<seed>_<split>.tsv
    k         INTEGER NOT NULL,
    seed      INTEGER NOT NULL,
    split     TEXT NOT NULL CHECK (split IN ('train', 'dev', 'test')),
    sha256    TEXT NOT NULL,
    n_rows    INTEGER NOT NULL,
    UNIQUE (task_id, file_name)
);

-- One row per line, as read: `output` is everything after the first tab (several gold outputs
-- stay tab-separated), so a file can be written back byte for byte.
CREATE TABLE crossfit_examples (
    id      INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES crossfit_files(id),
    line_no INTEGER NOT NULL,           -- 1-based
    input   TEXT NOT NULL,
    output  TEXT NOT NULL,
    UNIQUE (file_id, line_no)
);

-- Task partitions in CrossFit's JSON format {"train": [...], "dev": [...], "test": [...]}.
CREATE TABLE crossfit_partitions (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    json       TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- A run: one method's predictions for the test file of one task and seed, one per test line
-- in file order. The score is computed when read, with the task's metric at that time.
CREATE TABLE crossfit_runs (
    id          INTEGER PRIMARY KEY,
    method      TEXT NOT NULL,          -- groups runs across tasks and seeds, e.g. 'bart-base'
    task_id     INTEGER NOT NULL REFERENCES crossfit_tasks(id),
    seed        INTEGER NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('predictions', 'baseline')),
    predictions TEXT NOT NULL,          -- JSON list of strings
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (method, task_id, seed)
);
