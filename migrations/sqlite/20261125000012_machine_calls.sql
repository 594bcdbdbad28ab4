-- In-context learning through a language-model server (issue 27, `clues-lab icl`): each test
-- item's prompt, the server's reply as it came and how the reply was read as an answer
-- (domain::icl::Reading as JSON), stored as each reply arrives, so that a run stopped at any
-- moment goes on where it stopped and a reader can check every prompt and reply. The run's
-- answers and S1 are in machine_predictions like every run's. Never edit after it has landed.
CREATE TABLE machine_calls (
    run_id       INTEGER NOT NULL REFERENCES machine_runs(id),
    example_id   INTEGER NOT NULL REFERENCES examples(id),
    prompt       TEXT NOT NULL,
    reply        TEXT NOT NULL,
    reading_json TEXT NOT NULL,
    PRIMARY KEY (run_id, example_id)
);
