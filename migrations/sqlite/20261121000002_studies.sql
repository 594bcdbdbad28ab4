-- The crowd protocol (CLUES sec. 4.1): studies and their configuration history, crowd ids,
-- assignments of workers to scenarios, and every item a worker was shown with their answer.
-- Never edit after it has landed: add a new migration instead.

-- A study of one task. Its configuration lives in `study_configs`; `config_id` is the one in
-- force. Every edit writes a new configuration row, so exports can name the one each worker
-- started under.
CREATE TABLE studies (
    id         INTEGER PRIMARY KEY,
    task_id    INTEGER NOT NULL REFERENCES tasks(id),
    name       TEXT NOT NULL,
    config_id  INTEGER,              -- REFERENCES study_configs(id); NULL only while being created
    created_by INTEGER REFERENCES users(id),
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE study_configs (
    id          INTEGER PRIMARY KEY,
    study_id    INTEGER NOT NULL REFERENCES studies(id),
    config_json TEXT NOT NULL,       -- domain::study::StudyConfig as JSON
    created_by  INTEGER REFERENCES users(id),
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX study_configs_study ON study_configs(study_id);

-- External crowd identities (Prolific PID, MTurk workerId) of password-less workers.
CREATE TABLE crowd_ids (
    platform    TEXT NOT NULL CHECK (platform IN ('prolific', 'mturk')),
    external_id TEXT NOT NULL,
    user_id     INTEGER NOT NULL UNIQUE REFERENCES users(id),
    PRIMARY KEY (platform, external_id)
);

-- A worker's place in one scenario (k shots, 0 = zero-shot) of a study. A worker takes part
-- in at most one scenario of a task, across all studies of that task: UNIQUE (task_id, worker_id).
-- Abandoned places are kept (with their work) and no longer count towards the scenario's N.
CREATE TABLE assignments (
    id            INTEGER PRIMARY KEY,
    study_id      INTEGER NOT NULL REFERENCES studies(id),
    task_id       INTEGER NOT NULL REFERENCES tasks(id),
    worker_id     INTEGER NOT NULL REFERENCES users(id),
    k             INTEGER NOT NULL CHECK (k >= 0),
    config_id     INTEGER NOT NULL REFERENCES study_configs(id),  -- configuration at start
    training_split INTEGER,          -- split of the training examples, NULL for zero-shot
    order_seed    INTEGER NOT NULL,  -- seed of the recorded item orders
    status        TEXT NOT NULL CHECK (status IN ('active', 'finished', 'abandoned')),
    crowd_json    TEXT NOT NULL,     -- {platform, worker, study, session, assignment} as given in the link
    started_at    INTEGER NOT NULL,  -- unix milliseconds, server clock
    last_activity INTEGER NOT NULL,  -- unix milliseconds
    finished_at   INTEGER,           -- unix milliseconds
    abandoned_at  INTEGER,           -- unix milliseconds
    UNIQUE (task_id, worker_id)
);
CREATE INDEX assignments_study ON assignments(study_id, k, status);

-- Every item of an assignment in the order the worker sees it: the k training items of the
-- split, then the whole test set. Times are server timestamps in unix milliseconds.
-- `submitted_at` set = the answer is final (locked); training golds are revealed from then on.
CREATE TABLE assignment_items (
    assignment_id INTEGER NOT NULL REFERENCES assignments(id),
    position      INTEGER NOT NULL,  -- 0-based over training then test
    phase         TEXT NOT NULL CHECK (phase IN ('training', 'test')),
    example_id    INTEGER NOT NULL REFERENCES examples(id),
    shown_at      INTEGER,           -- first time the server handed the item out
    submitted_at  INTEGER,
    acknowledged_at INTEGER,         -- training: the worker moved on from the revealed gold
    client_id     TEXT,              -- the browser's id of the submission (idempotent resend)
    answer_json   TEXT,              -- [{text, offset, length}] code points; offset NULL for labels
    no_answer     INTEGER NOT NULL DEFAULT 0,  -- the explicit "no answer" choice
    skipped       INTEGER NOT NULL DEFAULT 0,
    confidence    INTEGER CHECK (confidence BETWEEN 1 AND 5),
    s1            REAL,              -- official S1 of the answer (a skip scores as no answer)
    s1_any_of     REAL,
    PRIMARY KEY (assignment_id, position)
);
CREATE UNIQUE INDEX assignment_items_client ON assignment_items(assignment_id, client_id);
