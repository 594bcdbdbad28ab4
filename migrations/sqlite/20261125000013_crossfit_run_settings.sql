-- What a run was made with, for the runs clues-lab trains itself (`crossfit learn`): the model
-- folder, the grid of learning rates and batch sizes with each setting's development score,
-- the chosen setting and the decoding settings, as JSON. NULL for runs stored from a file of
-- predictions and for the reference methods.
ALTER TABLE crossfit_runs ADD COLUMN settings_json TEXT;
