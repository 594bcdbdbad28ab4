-- Issue 55: the report is built once per change of its data, not once per request. This
-- counter goes up with every statement that inserts, updates or deletes rows of a table the
-- report reads; a server keeps its last build of a scope with the counter as it read it before
-- building, and builds again only when the counter has moved. It is a cache key and nothing
-- else: no row refers to it, a copy or backup need not carry it, and its value means nothing
-- across databases. A statement trigger each: one update of one row per statement, held to the
-- end of its transaction (writing transactions of several servers take turns on it at commit).
-- Never edit after it has landed.
CREATE TABLE report_version (
    id SMALLINT PRIMARY KEY CHECK (id = 1),
    n  BIGINT NOT NULL
);
INSERT INTO report_version (id, n) VALUES (1, 0);
CREATE FUNCTION report_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE report_version SET n = n + 1;
    RETURN NULL;
END
$$;
CREATE TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON users FOR EACH STATEMENT EXECUTE FUNCTION report_version_bump();
CREATE TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON tasks FOR EACH STATEMENT EXECUTE FUNCTION report_version_bump();
CREATE TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON data_files FOR EACH STATEMENT EXECUTE FUNCTION report_version_bump();
CREATE TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON examples FOR EACH STATEMENT EXECUTE FUNCTION report_version_bump();
CREATE TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON studies FOR EACH STATEMENT EXECUTE FUNCTION report_version_bump();
CREATE TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON study_configs FOR EACH STATEMENT EXECUTE FUNCTION report_version_bump();
CREATE TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON analysis_plans FOR EACH STATEMENT EXECUTE FUNCTION report_version_bump();
CREATE TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON crowd_ids FOR EACH STATEMENT EXECUTE FUNCTION report_version_bump();
CREATE TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON assignments FOR EACH STATEMENT EXECUTE FUNCTION report_version_bump();
CREATE TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON assignment_items FOR EACH STATEMENT EXECUTE FUNCTION report_version_bump();
CREATE TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON consent_refusals FOR EACH STATEMENT EXECUTE FUNCTION report_version_bump();
CREATE TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON questionnaire_answers FOR EACH STATEMENT EXECUTE FUNCTION report_version_bump();
CREATE TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON attention_answers FOR EACH STATEMENT EXECUTE FUNCTION report_version_bump();
CREATE TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON machine_systems FOR EACH STATEMENT EXECUTE FUNCTION report_version_bump();
CREATE TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON machine_runs FOR EACH STATEMENT EXECUTE FUNCTION report_version_bump();
CREATE TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON machine_predictions FOR EACH STATEMENT EXECUTE FUNCTION report_version_bump();
