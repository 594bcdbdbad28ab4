-- Screening items (issue 26): a study may have every worker answer a file of items first,
-- without feedback, so each scenario's group can be compared on the same yardstick. They are
-- rows of assignment_items with the new phase 'screening', before the training items.
-- Never edit after it has landed.
ALTER TABLE assignment_items DROP CONSTRAINT assignment_items_phase_check;
ALTER TABLE assignment_items ADD CONSTRAINT assignment_items_phase_check
    CHECK (phase IN ('screening', 'training', 'test'));
