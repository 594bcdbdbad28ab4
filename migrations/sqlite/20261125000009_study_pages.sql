-- A study's own pages (issue 30): the informed consent a worker accepted (the hash of the text
-- they read), refusals of consent (nothing else of the worker is kept), questionnaire answers
-- before training and after the test, and answers to attention checks. Times are unix
-- milliseconds, server clock. Never edit after it has landed: add a new migration instead.

-- SHA-256 (hex) of the consent text the worker accepted, and when; NULL without consent.
ALTER TABLE assignments ADD COLUMN consent_hash TEXT;
ALTER TABLE assignments ADD COLUMN consented_at INTEGER;

-- A declined consent: the place was freed and the worker's account and answers removed; only
-- this row says it happened, with the text that was declined and the platform, not who.
CREATE TABLE consent_refusals (
    id           INTEGER PRIMARY KEY,
    study_id     INTEGER NOT NULL REFERENCES studies(id),
    config_id    INTEGER NOT NULL REFERENCES study_configs(id),
    consent_hash TEXT NOT NULL,
    platform     TEXT,               -- 'prolific', 'mturk' or NULL (a worker account)
    refused_at   INTEGER NOT NULL
);
CREATE INDEX consent_refusals_study ON consent_refusals(study_id);

-- A questionnaire of an assignment: written when first shown, answered once.
CREATE TABLE questionnaire_answers (
    assignment_id INTEGER NOT NULL REFERENCES assignments(id),
    stage         TEXT NOT NULL CHECK (stage IN ('before', 'after')),
    shown_at      INTEGER NOT NULL,
    submitted_at  INTEGER,
    answers_json  TEXT,              -- {question id: answer}, as domain::study_pages validated it
    PRIMARY KEY (assignment_id, stage)
);

-- An attention check of an assignment (the study configuration's check `check_index`): written
-- when first shown, answered once (locked, like a test item), never scored as a test item.
CREATE TABLE attention_answers (
    assignment_id INTEGER NOT NULL REFERENCES assignments(id),
    check_index   INTEGER NOT NULL CHECK (check_index >= 0),
    shown_at      INTEGER NOT NULL,
    submitted_at  INTEGER,
    client_id     TEXT,              -- the browser's id of the submission (idempotent resend)
    answer_json   TEXT,              -- the answer's strings (empty: no answer or a skip)
    skipped       INTEGER NOT NULL DEFAULT 0,
    passed        INTEGER,           -- 1: the answer the check states, 0: anything else
    PRIMARY KEY (assignment_id, check_index)
);
