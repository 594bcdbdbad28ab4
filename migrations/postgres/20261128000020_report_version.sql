-- Issue 55: the report is built once per change of its data, not once per request. This
-- sequence moves on with every row inserted, updated or deleted in a table the report reads; a
-- server keeps its last build of a scope with the value it read before building, and builds
-- again only when the value has moved. It is a cache key and nothing else: its value means
-- nothing across databases, and a copy need not carry it.
-- A sequence, not a row: nextval takes no lock that another transaction waits on (a counter
-- row updated by every writing transaction made the crowds of two studies, imports and
-- exports wait on each other). The triggers are deferred to commit, so the value moves as the
-- change becomes visible, not while its transaction may still be running. SQLite's version is
-- a counter row (migrations/sqlite, same number): there writers take turns anyway.
-- Never edit after it has landed.
CREATE SEQUENCE report_version_seq;
CREATE FUNCTION report_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM nextval('report_version_seq');
    RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE ON users DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_version_bump();
CREATE CONSTRAINT TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE ON tasks DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_version_bump();
CREATE CONSTRAINT TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE ON data_files DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_version_bump();
CREATE CONSTRAINT TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE ON examples DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_version_bump();
CREATE CONSTRAINT TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE ON studies DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_version_bump();
CREATE CONSTRAINT TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE ON study_configs DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_version_bump();
CREATE CONSTRAINT TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE ON analysis_plans DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_version_bump();
CREATE CONSTRAINT TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE ON crowd_ids DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_version_bump();
CREATE CONSTRAINT TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE ON assignments DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_version_bump();
CREATE CONSTRAINT TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE ON assignment_items DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_version_bump();
CREATE CONSTRAINT TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE ON consent_refusals DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_version_bump();
CREATE CONSTRAINT TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE ON questionnaire_answers DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_version_bump();
CREATE CONSTRAINT TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE ON attention_answers DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_version_bump();
CREATE CONSTRAINT TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE ON machine_systems DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_version_bump();
CREATE CONSTRAINT TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE ON machine_runs DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_version_bump();
CREATE CONSTRAINT TRIGGER report_version_bump AFTER INSERT OR UPDATE OR DELETE ON machine_predictions DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_version_bump();
