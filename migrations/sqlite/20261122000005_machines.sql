-- The model track (issue 5): machine systems, their evaluations on a task's test set, and
-- their predictions, scored with the same S1 code as the crowd.

-- A system: a registered ONNX span-extraction model, the built-in MiniLM baseline, or
-- predictions imported from elsewhere (e.g. in-context learning outputs of an LLM).
CREATE TABLE machine_systems (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    kind        TEXT NOT NULL CHECK (kind IN ('onnx', 'baseline', 'imported')),
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- One evaluation of a system on a task's whole test set, for the shot group it was trained
-- on (k = 0 and split = 0: no training shots, or unknown). `done`/`total` count model inputs
-- (or items) and are updated while it runs, for the live progress on /models.
CREATE TABLE machine_runs (
    id            INTEGER PRIMARY KEY,
    system_id     INTEGER NOT NULL REFERENCES machine_systems(id),
    task_id       INTEGER NOT NULL REFERENCES tasks(id),
    k             INTEGER NOT NULL CHECK (k >= 0),
    split         INTEGER NOT NULL CHECK (split >= 0),
    status        TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'replaced')),
    source        TEXT NOT NULL,          -- model directory or imported file
    settings_json TEXT NOT NULL,          -- decoding (and training) settings, '{}' for imports
    provider      TEXT NOT NULL,          -- where it ran, in words ('imported' for imports)
    done          INTEGER NOT NULL DEFAULT 0,
    total         INTEGER NOT NULL DEFAULT 0,
    error         TEXT,
    started_at    INTEGER NOT NULL,       -- unix ms
    finished_at   INTEGER,                -- unix ms
    s1            REAL,                   -- official scoring, set when done
    s1_any_of     REAL
);
-- At most one finished evaluation per system, task and shot group; a re-run marks the old one 'replaced'.
CREATE UNIQUE INDEX machine_runs_one_done ON machine_runs(system_id, task_id, k, split) WHERE status = 'done';

-- A run's answer for each test item, in the official encoding, with the spans it came from.
CREATE TABLE machine_predictions (
    run_id      INTEGER NOT NULL REFERENCES machine_runs(id),
    example_id  INTEGER NOT NULL REFERENCES examples(id),
    answer_json TEXT NOT NULL,            -- JSON list of strings, official encoding
    spans_json  TEXT NOT NULL,            -- JSON [{source, offset, length, text, score}], [] for imports
    s1          REAL NOT NULL,
    s1_any_of   REAL NOT NULL,
    PRIMARY KEY (run_id, example_id)
);
