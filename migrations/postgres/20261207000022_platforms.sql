-- Issue 75: running a study on Prolific and MTurk from the dashboard. A study's publication on
-- a platform, the submissions read back from it, the researcher's decisions on them, and the
-- ledger of every call made to a platform. Each call is a job of a fourth kind (`platform`),
-- leased and retried like a learner's; its ledger row is its key table, written as an intent
-- with its idempotency key before anything is sent, and marked with the platform's answer
-- after. No credential is ever stored here: the operator gives them to `serve` (see
-- docs/src/platforms.md). Never edit after it has landed.
ALTER TABLE jobs DROP CONSTRAINT jobs_kind_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_kind_check CHECK (kind IN ('grid', 'crossfit', 'upstream', 'platform'));

-- A study's publication on one crowd platform (one per study): the draft the researcher
-- confirmed, and what the platform calls it once created. `places` is what the platform was
-- asked for so far: the plan's annotators x scenarios, plus one for each place the study
-- reclaimed (a worker who never finished) and asked for again.
CREATE TABLE platform_studies (
    study_id      BIGINT PRIMARY KEY REFERENCES studies(id),
    platform      TEXT NOT NULL CHECK (platform IN ('prolific', 'mturk')),
    sandbox       BIGINT NOT NULL CHECK (sandbox IN (0, 1)),  -- MTurk's sandbox; Prolific: 0
    draft_json    TEXT NOT NULL,    -- domain::platform::draft::Draft, as confirmed
    status        TEXT NOT NULL CHECK (status IN ('draft', 'published')),
    remote_id     TEXT,             -- Prolific's study id, MTurk's HIT id, once created
    remote_group  TEXT,             -- MTurk's HIT type id (its preview link)
    places        BIGINT NOT NULL CHECK (places >= 0),
    budget_cents  BIGINT NOT NULL CHECK (budget_cents >= 0),
    created_by    BIGINT REFERENCES users(id),
    created_at    BIGINT NOT NULL,  -- unix ms, server clock
    published_at  BIGINT,           -- unix ms: when the publication was confirmed
    synced_at     BIGINT            -- unix ms: the last read of its submissions
);

-- The list of a task's workers on a platform: a Prolific participant group, an MTurk
-- qualification type. Every worker who starts any study of the task is put on it, and every
-- publication of the task excludes it, so each scenario gets workers new to the task. One per
-- task, platform and site (MTurk's live and sandbox).
CREATE TABLE platform_groups (
    task_id   BIGINT NOT NULL REFERENCES tasks(id),
    platform  TEXT NOT NULL CHECK (platform IN ('prolific', 'mturk')),
    sandbox   BIGINT NOT NULL CHECK (sandbox IN (0, 1)),
    remote_id TEXT NOT NULL,        -- the group's or qualification type's id
    PRIMARY KEY (task_id, platform, sandbox)
);

-- The submissions (Prolific) and assignments (MTurk) read back from a publication, as the
-- platform last said them.
CREATE TABLE platform_submissions (
    study_id     BIGINT NOT NULL REFERENCES studies(id),
    remote_id    TEXT NOT NULL,     -- Prolific's submission id, MTurk's assignment id
    worker       TEXT NOT NULL,     -- the platform's worker id
    status       TEXT NOT NULL CHECK (status IN ('active', 'submitted', 'approved', 'rejected', 'returned', 'timed_out')),
    started_at   BIGINT,            -- unix ms, as the platform says
    submitted_at BIGINT,            -- unix ms, as the platform says
    code         TEXT,              -- the completion code the worker entered (Prolific)
    seen_at      BIGINT NOT NULL,   -- unix ms, server clock: the last read
    PRIMARY KEY (study_id, remote_id)
);

-- The researcher's decision on a finished submission: approve (everyone who finished, by
-- default) or reject by a stated rule, with the words the worker reads. Stored when confirmed;
-- the approve and reject calls are planned from these rows, never from the report again.
CREATE TABLE platform_decisions (
    study_id   BIGINT NOT NULL REFERENCES studies(id),
    remote_id  TEXT NOT NULL,       -- the submission decided on
    decision   TEXT NOT NULL CHECK (decision IN ('approve', 'reject')),
    rule       TEXT,                -- a rejection's stated rule (domain::platform::decide::Rule)
    message    TEXT,                -- what the worker reads with a rejection
    decided_by BIGINT REFERENCES users(id),
    decided_at BIGINT NOT NULL,     -- unix ms, server clock
    PRIMARY KEY (study_id, remote_id)
);

-- The ledger: every call to a platform, one row and one job each (the job's id). Written as an
-- intent with its idempotency key before it is sent ('intent'); 'sent' once a send began, whose
-- answer may have been lost (a retry then reads what exists, or repeats the key); 'done' with
-- the platform's answer, or 'refused' with its refusal.
CREATE TABLE platform_actions (
    id           BIGINT PRIMARY KEY REFERENCES jobs(id),
    study_id     BIGINT NOT NULL REFERENCES studies(id),
    platform     TEXT NOT NULL CHECK (platform IN ('prolific', 'mturk')),
    sandbox      BIGINT NOT NULL CHECK (sandbox IN (0, 1)),
    action       TEXT NOT NULL,     -- domain::platform::ledger::Action
    idem_key     TEXT NOT NULL UNIQUE,  -- the idempotency key (MTurk's UniqueRequestToken)
    target       TEXT,              -- the submission, worker or publication it acts on
    amount_cents BIGINT NOT NULL DEFAULT 0,  -- what it may spend, the platform's fees included
    request_json TEXT NOT NULL,     -- what it sends (never a credential)
    state        TEXT NOT NULL CHECK (state IN ('intent', 'sent', 'done', 'refused')),
    remote_ref   TEXT,              -- a step's id between two calls (Prolific's bulk bonus)
    answer_json  TEXT,              -- the platform's answer or refusal
    next_try_at  BIGINT NOT NULL,   -- unix ms: not claimed before (a passing fault's wait)
    tries        BIGINT NOT NULL DEFAULT 0,  -- sends so far
    created_by   BIGINT REFERENCES users(id),
    created_at   BIGINT NOT NULL,   -- unix ms, server clock
    sent_at      BIGINT,            -- unix ms: the last send
    answered_at  BIGINT             -- unix ms: the answer
);
CREATE INDEX platform_actions_study ON platform_actions(study_id, id);
