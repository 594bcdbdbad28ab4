-- Screening items (issue 26): a study may have every worker answer a file of items first,
-- without feedback, so each scenario's group can be compared on the same yardstick. They are
-- rows of assignment_items with the new phase 'screening', before the training items.
-- SQLite cannot change a CHECK constraint, so the table is rebuilt with the same columns (in
-- the same order), rows and index; nothing references it. Never edit after it has landed.
CREATE TABLE assignment_items_screening (
    assignment_id INTEGER NOT NULL REFERENCES assignments(id),
    position      INTEGER NOT NULL,  -- 0-based over screening, training, then test
    phase         TEXT NOT NULL CHECK (phase IN ('screening', 'training', 'test')),
    example_id    INTEGER NOT NULL REFERENCES examples(id),
    shown_at      INTEGER,           -- first time the server handed the item out
    submitted_at  INTEGER,
    acknowledged_at INTEGER,         -- training: the worker moved on from the revealed gold
    client_id     TEXT,              -- the browser's id of the submission (idempotent resend)
    answer_json   TEXT,              -- [{text, offset, length}] code points; offset NULL for labels
    no_answer     INTEGER NOT NULL DEFAULT 0,  -- the explicit "no answer" choice
    skipped       INTEGER NOT NULL DEFAULT 0,
    confidence    INTEGER CHECK (confidence BETWEEN 1 AND 5),
    s1            REAL,              -- official S1 of the answer (a skip scores 0)
    s1_any_of     REAL,
    PRIMARY KEY (assignment_id, position)
);
INSERT INTO assignment_items_screening
    SELECT assignment_id, position, phase, example_id, shown_at, submitted_at, acknowledged_at,
           client_id, answer_json, no_answer, skipped, confidence, s1, s1_any_of
    FROM assignment_items;
DROP TABLE assignment_items;
ALTER TABLE assignment_items_screening RENAME TO assignment_items;
CREATE UNIQUE INDEX assignment_items_client ON assignment_items(assignment_id, client_id);
