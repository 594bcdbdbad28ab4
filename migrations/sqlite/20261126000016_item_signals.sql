-- Issue 40: what the worker's page recorded while an item was shown, sent with its answer:
-- time hidden or out of focus (count and milliseconds), copies (count, characters, how many
-- held text of the item), pastes (count, characters), time to the first input, active and
-- wall time. Counts and durations only, as JSON (`domain::authenticity::ItemSignals`); NULL
-- for answers from pages that sent none (older pages, `load fill`). The report reads them into
-- each worker's authenticity level.
-- Never edit after it has landed.
ALTER TABLE assignment_items ADD COLUMN signals_json TEXT;
