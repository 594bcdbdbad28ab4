-- Issue 42: one worker command for every kind of job (`clues-lab worker`). A grid job now
-- carries the recipe any worker runs it with, as crossfit_jobs.settings_json does: JSON naming
-- the learner (the frozen baseline, fine-tuning of an encoder folder, or an ONNX model folder
-- to evaluate) and whether it replaces a finished run, so a worker that did not queue the job
-- can run it. NULL for jobs queued before this: only the command that queued them runs them.
-- Never edit after it has landed.
ALTER TABLE grid_jobs ADD COLUMN recipe_json TEXT;
