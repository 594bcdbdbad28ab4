-- Issue 55: the report is built once per change of its data, not once per request. This
-- counter goes up with every insert, update or delete in a table the report reads; a server
-- keeps its last build of a scope with the counter as it read it before building, and builds
-- again only when the counter has moved. It is a cache key and nothing else: no row refers to
-- it, a copy or backup need not carry it, and its value means nothing across databases.
-- SQLite has no statement triggers: a row trigger each (one more write of a single row that
-- the transaction already holds). Never edit after it has landed.
CREATE TABLE report_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
);
INSERT INTO report_version (id, n) VALUES (1, 0);
CREATE TRIGGER report_version_users_i AFTER INSERT ON users BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_users_u AFTER UPDATE ON users BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_users_d AFTER DELETE ON users BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_tasks_i AFTER INSERT ON tasks BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_tasks_u AFTER UPDATE ON tasks BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_tasks_d AFTER DELETE ON tasks BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_data_files_i AFTER INSERT ON data_files BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_data_files_u AFTER UPDATE ON data_files BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_data_files_d AFTER DELETE ON data_files BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_examples_i AFTER INSERT ON examples BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_examples_u AFTER UPDATE ON examples BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_examples_d AFTER DELETE ON examples BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_studies_i AFTER INSERT ON studies BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_studies_u AFTER UPDATE ON studies BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_studies_d AFTER DELETE ON studies BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_study_configs_i AFTER INSERT ON study_configs BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_study_configs_u AFTER UPDATE ON study_configs BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_study_configs_d AFTER DELETE ON study_configs BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_analysis_plans_i AFTER INSERT ON analysis_plans BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_analysis_plans_u AFTER UPDATE ON analysis_plans BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_analysis_plans_d AFTER DELETE ON analysis_plans BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_crowd_ids_i AFTER INSERT ON crowd_ids BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_crowd_ids_u AFTER UPDATE ON crowd_ids BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_crowd_ids_d AFTER DELETE ON crowd_ids BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_assignments_i AFTER INSERT ON assignments BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_assignments_u AFTER UPDATE ON assignments BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_assignments_d AFTER DELETE ON assignments BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_assignment_items_i AFTER INSERT ON assignment_items BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_assignment_items_u AFTER UPDATE ON assignment_items BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_assignment_items_d AFTER DELETE ON assignment_items BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_consent_refusals_i AFTER INSERT ON consent_refusals BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_consent_refusals_u AFTER UPDATE ON consent_refusals BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_consent_refusals_d AFTER DELETE ON consent_refusals BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_questionnaire_answers_i AFTER INSERT ON questionnaire_answers BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_questionnaire_answers_u AFTER UPDATE ON questionnaire_answers BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_questionnaire_answers_d AFTER DELETE ON questionnaire_answers BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_attention_answers_i AFTER INSERT ON attention_answers BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_attention_answers_u AFTER UPDATE ON attention_answers BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_attention_answers_d AFTER DELETE ON attention_answers BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_machine_systems_i AFTER INSERT ON machine_systems BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_machine_systems_u AFTER UPDATE ON machine_systems BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_machine_systems_d AFTER DELETE ON machine_systems BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_machine_runs_i AFTER INSERT ON machine_runs BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_machine_runs_u AFTER UPDATE ON machine_runs BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_machine_runs_d AFTER DELETE ON machine_runs BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_machine_predictions_i AFTER INSERT ON machine_predictions BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_machine_predictions_u AFTER UPDATE ON machine_predictions BEGIN UPDATE report_version SET n = n + 1; END;
CREATE TRIGGER report_version_machine_predictions_d AFTER DELETE ON machine_predictions BEGIN UPDATE report_version SET n = n + 1; END;
