-- Foundation schema: accounts, sessions, tasks in the unified format, their source files,
-- examples, and the import's data-quality report. Never edit after it has landed: add a
-- new migration instead.

-- People. Staff (admin, researcher) log in with a password; crowd workers may have none
-- and enter through study links.
CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    role          TEXT NOT NULL CHECK (role IN ('admin', 'researcher', 'worker')),
    password_hash TEXT,              -- argon2id PHC string, NULL for password-less workers
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- Browser sessions. The cookie holds a random token; only its SHA-256 (hex) is stored.
CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,     -- unix seconds
    expires_at INTEGER NOT NULL      -- unix seconds
);
CREATE INDEX sessions_user ON sessions(user_id);

-- A task in the unified format (context, question, answer = set of spans).
CREATE TABLE tasks (
    id                  INTEGER PRIMARY KEY,
    name                TEXT NOT NULL UNIQUE,  -- CLUES directory name, e.g. 'SST-2'; demo tasks 'demo-SST-2'
    family              TEXT NOT NULL CHECK (family IN ('classification', 'sequence_labelling', 'reading_comprehension')),
    description         TEXT NOT NULL,         -- what a worker reads before starting
    labels_json         TEXT NOT NULL,         -- [{name, definition, example}], [] for span tasks
    question_types_json TEXT NOT NULL,         -- [{key, question}]
    no_answer           TEXT NOT NULL CHECK (no_answer IN ('empty_string', 'empty_list')), -- official encoding of "no answer"
    source              TEXT NOT NULL,         -- 'clues' or 'demo'
    imported_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- Every imported file, with its hash: a re-import of identical files changes nothing, and
-- a changed file is refused rather than silently replacing data.
CREATE TABLE data_files (
    id        INTEGER PRIMARY KEY,
    task_id   INTEGER NOT NULL REFERENCES tasks(id),
    file_name TEXT NOT NULL,
    kind      TEXT NOT NULL CHECK (kind IN ('train', 'test')),
    k         INTEGER,                -- shots, train files only
    split     INTEGER,                -- 1-based split number, train files only
    sha256    TEXT NOT NULL,
    n_rows    INTEGER NOT NULL,
    UNIQUE (task_id, file_name),
    CHECK ((kind = 'test' AND k IS NULL AND split IS NULL) OR (kind = 'train' AND k > 0 AND split > 0))
);

-- One row per line of a data file, as read. A shot group (k, split) is the rows of its
-- train file; the test set is the rows of the test file.
CREATE TABLE examples (
    id            INTEGER PRIMARY KEY,
    file_id       INTEGER NOT NULL REFERENCES data_files(id),
    line_no       INTEGER NOT NULL,   -- 1-based line in the file
    ext_id        TEXT NOT NULL,      -- id as in the file, stringified; not unique in SST-2 train files
    context       TEXT NOT NULL,      -- the context, or MNLI's premise
    context2      TEXT,               -- MNLI's hypothesis, NULL otherwise
    question      TEXT NOT NULL,
    question_type TEXT,               -- key of the task's question type, NULL if the question is not a declared one
    gold_official TEXT NOT NULL,      -- JSON list of answer strings in the official encoding
    gold_spans    TEXT NOT NULL,      -- JSON [{text, offset}], internal encoding; offsets in code points of `context`
    extra_json    TEXT NOT NULL,      -- other source fields (genre, is_impossible, entities in code points, exclusive end)
    content_key   TEXT NOT NULL,      -- SHA-256 of context, question and answer: same item across files
    UNIQUE (file_id, line_no)
);
CREATE INDEX examples_content ON examples(content_key);

-- What the import found and reported; nothing is dropped or altered because of it.
CREATE TABLE quality_issues (
    id      INTEGER PRIMARY KEY,
    task_id INTEGER NOT NULL REFERENCES tasks(id),
    file_id INTEGER REFERENCES data_files(id),  -- NULL for checks across files
    line_no INTEGER,
    kind    TEXT NOT NULL,                       -- e.g. gold_not_in_context, duplicate_id, not_nested
    detail  TEXT NOT NULL
);
CREATE INDEX quality_task ON quality_issues(task_id);
