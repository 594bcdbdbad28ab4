-- Issue 76: a report's data version per scope, not one for the whole database. Migration 20
-- moved one counter with every write to any table a report reads, so every answer of any study
-- made every kept report, dashboard and pay sheet of every other study stale. Now:
--   * each study has its own counter (`study_versions`), moved by a write to the study, its
--     configurations, plan, places, items, pages' answers, consent refusals, or the crowd id of
--     one of its workers;
--   * what every report reads alike (tasks, their files and examples, machine systems and their
--     runs, a person's name or role) moves one shared counter (`report_shared_version`); a
--     running evaluation's progress (done, total) no longer moves it.
-- A scope's version is the shared counter plus its studies' counters (all studies' where it
-- names none): every counter only goes up, so the sum is equal exactly when none has moved.
-- A study's counter outlives the study (no foreign key): deleting it moves the sum of every
-- study's up, never down. Cache keys and nothing else, as in migration 20. A new study's counter
-- is made by its insert trigger. Never edit after it has landed.
CREATE TABLE study_versions (
    study_id INTEGER PRIMARY KEY,
    n        INTEGER NOT NULL
);
INSERT INTO study_versions (study_id, n) SELECT id, 0 FROM studies;
CREATE TABLE report_shared_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
);
INSERT INTO report_shared_version (id, n) VALUES (1, 0);

-- The old counter's triggers and row (migration 20) go.
DROP TRIGGER report_version_users_i;
DROP TRIGGER report_version_users_u;
DROP TRIGGER report_version_users_d;
DROP TRIGGER report_version_tasks_i;
DROP TRIGGER report_version_tasks_u;
DROP TRIGGER report_version_tasks_d;
DROP TRIGGER report_version_data_files_i;
DROP TRIGGER report_version_data_files_u;
DROP TRIGGER report_version_data_files_d;
DROP TRIGGER report_version_examples_i;
DROP TRIGGER report_version_examples_u;
DROP TRIGGER report_version_examples_d;
DROP TRIGGER report_version_studies_i;
DROP TRIGGER report_version_studies_u;
DROP TRIGGER report_version_studies_d;
DROP TRIGGER report_version_study_configs_i;
DROP TRIGGER report_version_study_configs_u;
DROP TRIGGER report_version_study_configs_d;
DROP TRIGGER report_version_analysis_plans_i;
DROP TRIGGER report_version_analysis_plans_u;
DROP TRIGGER report_version_analysis_plans_d;
DROP TRIGGER report_version_crowd_ids_i;
DROP TRIGGER report_version_crowd_ids_u;
DROP TRIGGER report_version_crowd_ids_d;
DROP TRIGGER report_version_assignments_i;
DROP TRIGGER report_version_assignments_u;
DROP TRIGGER report_version_assignments_d;
DROP TRIGGER report_version_assignment_items_i;
DROP TRIGGER report_version_assignment_items_u;
DROP TRIGGER report_version_assignment_items_d;
DROP TRIGGER report_version_consent_refusals_i;
DROP TRIGGER report_version_consent_refusals_u;
DROP TRIGGER report_version_consent_refusals_d;
DROP TRIGGER report_version_questionnaire_answers_i;
DROP TRIGGER report_version_questionnaire_answers_u;
DROP TRIGGER report_version_questionnaire_answers_d;
DROP TRIGGER report_version_attention_answers_i;
DROP TRIGGER report_version_attention_answers_u;
DROP TRIGGER report_version_attention_answers_d;
DROP TRIGGER report_version_machine_systems_i;
DROP TRIGGER report_version_machine_systems_u;
DROP TRIGGER report_version_machine_systems_d;
DROP TRIGGER report_version_machine_runs_i;
DROP TRIGGER report_version_machine_runs_u;
DROP TRIGGER report_version_machine_runs_d;
DROP TRIGGER report_version_machine_predictions_i;
DROP TRIGGER report_version_machine_predictions_u;
DROP TRIGGER report_version_machine_predictions_d;
DROP TABLE report_version;

-- A study's rows: the study itself (a new study gets its counter), ...
CREATE TRIGGER report_study_studies_i AFTER INSERT ON studies BEGIN INSERT OR IGNORE INTO study_versions (study_id, n) VALUES (NEW.id, 0); UPDATE study_versions SET n = n + 1 WHERE study_id = NEW.id; END;
CREATE TRIGGER report_study_studies_u AFTER UPDATE ON studies BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id = NEW.id; END;
CREATE TRIGGER report_study_studies_d AFTER DELETE ON studies BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id = OLD.id; END;
-- ... the tables that name their study, ...
CREATE TRIGGER report_study_study_configs_i AFTER INSERT ON study_configs BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id = NEW.study_id; END;
CREATE TRIGGER report_study_study_configs_u AFTER UPDATE ON study_configs BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id = NEW.study_id; END;
CREATE TRIGGER report_study_study_configs_d AFTER DELETE ON study_configs BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id = OLD.study_id; END;
CREATE TRIGGER report_study_analysis_plans_i AFTER INSERT ON analysis_plans BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id = NEW.study_id; END;
CREATE TRIGGER report_study_analysis_plans_u AFTER UPDATE ON analysis_plans BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id = NEW.study_id; END;
CREATE TRIGGER report_study_analysis_plans_d AFTER DELETE ON analysis_plans BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id = OLD.study_id; END;
CREATE TRIGGER report_study_assignments_i AFTER INSERT ON assignments BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id = NEW.study_id; END;
CREATE TRIGGER report_study_assignments_u AFTER UPDATE ON assignments BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id = NEW.study_id; END;
CREATE TRIGGER report_study_assignments_d AFTER DELETE ON assignments BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id = OLD.study_id; END;
CREATE TRIGGER report_study_consent_refusals_i AFTER INSERT ON consent_refusals BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id = NEW.study_id; END;
CREATE TRIGGER report_study_consent_refusals_u AFTER UPDATE ON consent_refusals BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id = NEW.study_id; END;
CREATE TRIGGER report_study_consent_refusals_d AFTER DELETE ON consent_refusals BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id = OLD.study_id; END;
-- ... the tables that name an assignment (an assignment deleted first has already moved it), ...
CREATE TRIGGER report_study_assignment_items_i AFTER INSERT ON assignment_items BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id IN (SELECT study_id FROM assignments WHERE id = NEW.assignment_id); END;
CREATE TRIGGER report_study_assignment_items_u AFTER UPDATE ON assignment_items BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id IN (SELECT study_id FROM assignments WHERE id = NEW.assignment_id); END;
CREATE TRIGGER report_study_assignment_items_d AFTER DELETE ON assignment_items BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id IN (SELECT study_id FROM assignments WHERE id = OLD.assignment_id); END;
CREATE TRIGGER report_study_questionnaire_answers_i AFTER INSERT ON questionnaire_answers BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id IN (SELECT study_id FROM assignments WHERE id = NEW.assignment_id); END;
CREATE TRIGGER report_study_questionnaire_answers_u AFTER UPDATE ON questionnaire_answers BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id IN (SELECT study_id FROM assignments WHERE id = NEW.assignment_id); END;
CREATE TRIGGER report_study_questionnaire_answers_d AFTER DELETE ON questionnaire_answers BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id IN (SELECT study_id FROM assignments WHERE id = OLD.assignment_id); END;
CREATE TRIGGER report_study_attention_answers_i AFTER INSERT ON attention_answers BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id IN (SELECT study_id FROM assignments WHERE id = NEW.assignment_id); END;
CREATE TRIGGER report_study_attention_answers_u AFTER UPDATE ON attention_answers BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id IN (SELECT study_id FROM assignments WHERE id = NEW.assignment_id); END;
CREATE TRIGGER report_study_attention_answers_d AFTER DELETE ON attention_answers BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id IN (SELECT study_id FROM assignments WHERE id = OLD.assignment_id); END;
-- ... and a worker's crowd id changed or removed (a new one has no assignment yet).
CREATE TRIGGER report_study_crowd_ids_u AFTER UPDATE ON crowd_ids BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id IN (SELECT study_id FROM assignments WHERE worker_id = OLD.user_id); END;
CREATE TRIGGER report_study_crowd_ids_d AFTER DELETE ON crowd_ids BEGIN UPDATE study_versions SET n = n + 1 WHERE study_id IN (SELECT study_id FROM assignments WHERE worker_id = OLD.user_id); END;

-- What every report reads: the tasks and their data, the machine systems and their finished
-- runs (a running run's progress is not read), and a person's name or role.
CREATE TRIGGER report_shared_tasks_i AFTER INSERT ON tasks BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_tasks_u AFTER UPDATE ON tasks BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_tasks_d AFTER DELETE ON tasks BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_data_files_i AFTER INSERT ON data_files BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_data_files_u AFTER UPDATE ON data_files BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_data_files_d AFTER DELETE ON data_files BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_examples_i AFTER INSERT ON examples BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_examples_u AFTER UPDATE ON examples BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_examples_d AFTER DELETE ON examples BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_machine_systems_i AFTER INSERT ON machine_systems BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_machine_systems_u AFTER UPDATE ON machine_systems BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_machine_systems_d AFTER DELETE ON machine_systems BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_machine_predictions_i AFTER INSERT ON machine_predictions BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_machine_predictions_u AFTER UPDATE ON machine_predictions BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_machine_predictions_d AFTER DELETE ON machine_predictions BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_machine_runs_i AFTER INSERT ON machine_runs BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_machine_runs_u AFTER UPDATE OF status, s1, s1_any_of, k, split, system_id, task_id, provider ON machine_runs BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_machine_runs_d AFTER DELETE ON machine_runs BEGIN UPDATE report_shared_version SET n = n + 1; END;
CREATE TRIGGER report_shared_users_u AFTER UPDATE OF name, role ON users BEGIN UPDATE report_shared_version SET n = n + 1; END;
