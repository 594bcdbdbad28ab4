-- Issue 76: a report's data version per scope, not one for the whole database. Migration 20
-- moved one sequence with every row written to any table a report reads, so every answer of
-- any study made every kept report, dashboard and pay sheet of every other study stale. Now:
--   * a study's changes are logged in `report_changes` as (study, value of report_version_seq)
--     by a write to the study, its configurations, plan, places, items, pages' answers, consent
--     refusals, or the crowd id of one of its workers;
--   * what every report reads alike (tasks, their files and examples, machine systems and their
--     runs, a person's name or role) moves `report_shared_seq`; a running evaluation's progress
--     (done, total) no longer moves it.
-- A scope's version is report_shared_seq's last value plus the largest value logged for its
-- studies (every study's where it names none). One sequence numbers every study's changes, so
-- a change to any study of the scope logs a value above every value logged before: the largest
-- moves exactly when the scope's data does. An insert of a log row, not an update of a counter
-- row: rows inserted take no lock another transaction waits on, so a study's crowd commits side
-- by side as before (a counter row would make its answers commit one after another). The log
-- is a cache key and nothing else: unlogged (no write-ahead log for it, nothing for a replica
-- or a backup), with no index (the server prunes it every 10 s to each study's largest value,
-- store::report::prune_versions, so a version reads a few thousand rows at most). After a crash
-- PostgreSQL empties it: a version then reads lower until the next change, and a server's kept
-- build is taken for at most the minute it is trusted for. As in migration 20 the triggers are
-- deferred to commit, and the rows outlive their study (no foreign key). Never edit after it
-- has landed.
CREATE UNLOGGED TABLE report_changes (
    study_id BIGINT NOT NULL,
    n        BIGINT NOT NULL
);
CREATE SEQUENCE report_shared_seq;

-- Logs a change of the study that the row names: by TG_ARGV[0], its own id (studies), a
-- study_id, an assignment_id (the assignment's study; none where the assignment went first,
-- whose own delete logged it) or a user_id (the studies of the worker's places). The column is
-- read straight from the row (PL/pgSQL compiles a trigger function for each table apart, and a
-- branch only when it runs), not from the whole row made into JSON, which cost the crowd more.
CREATE FUNCTION report_study_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    IF TG_OP = 'DELETE' THEN
        r := OLD;
    ELSE
        r := NEW;
    END IF;
    CASE TG_ARGV[0]
        WHEN 'id' THEN
            INSERT INTO report_changes (study_id, n) VALUES (r.id, nextval('report_version_seq'));
        WHEN 'study_id' THEN
            INSERT INTO report_changes (study_id, n) VALUES (r.study_id, nextval('report_version_seq'));
        WHEN 'assignment_id' THEN
            INSERT INTO report_changes (study_id, n)
                SELECT study_id, nextval('report_version_seq') FROM assignments WHERE id = r.assignment_id;
        WHEN 'user_id' THEN
            INSERT INTO report_changes (study_id, n)
                SELECT study_id, nextval('report_version_seq') FROM assignments WHERE worker_id = r.user_id;
    END CASE;
    RETURN NULL;
END
$$;

CREATE FUNCTION report_shared_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM nextval('report_shared_seq');
    RETURN NULL;
END
$$;

-- The old sequence's triggers (migration 20) go.
DROP TRIGGER report_version_bump ON users;
DROP TRIGGER report_version_bump ON tasks;
DROP TRIGGER report_version_bump ON data_files;
DROP TRIGGER report_version_bump ON examples;
DROP TRIGGER report_version_bump ON studies;
DROP TRIGGER report_version_bump ON study_configs;
DROP TRIGGER report_version_bump ON analysis_plans;
DROP TRIGGER report_version_bump ON crowd_ids;
DROP TRIGGER report_version_bump ON assignments;
DROP TRIGGER report_version_bump ON assignment_items;
DROP TRIGGER report_version_bump ON consent_refusals;
DROP TRIGGER report_version_bump ON questionnaire_answers;
DROP TRIGGER report_version_bump ON attention_answers;
DROP TRIGGER report_version_bump ON machine_systems;
DROP TRIGGER report_version_bump ON machine_runs;
DROP TRIGGER report_version_bump ON machine_predictions;
DROP FUNCTION report_version_bump();

-- A study's rows: the study itself, the tables that name their study, those that name an
-- assignment, and a worker's crowd id changed or removed.
CREATE CONSTRAINT TRIGGER report_study_changed AFTER INSERT OR UPDATE OR DELETE ON studies DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_study_changed('id');
CREATE CONSTRAINT TRIGGER report_study_changed AFTER INSERT OR UPDATE OR DELETE ON study_configs DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_study_changed('study_id');
CREATE CONSTRAINT TRIGGER report_study_changed AFTER INSERT OR UPDATE OR DELETE ON analysis_plans DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_study_changed('study_id');
CREATE CONSTRAINT TRIGGER report_study_changed AFTER INSERT OR UPDATE OR DELETE ON assignments DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_study_changed('study_id');
CREATE CONSTRAINT TRIGGER report_study_changed AFTER INSERT OR UPDATE OR DELETE ON consent_refusals DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_study_changed('study_id');
CREATE CONSTRAINT TRIGGER report_study_changed AFTER INSERT OR UPDATE OR DELETE ON assignment_items DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_study_changed('assignment_id');
CREATE CONSTRAINT TRIGGER report_study_changed AFTER INSERT OR UPDATE OR DELETE ON questionnaire_answers DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_study_changed('assignment_id');
CREATE CONSTRAINT TRIGGER report_study_changed AFTER INSERT OR UPDATE OR DELETE ON attention_answers DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_study_changed('assignment_id');
CREATE CONSTRAINT TRIGGER report_study_changed AFTER UPDATE OR DELETE ON crowd_ids DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_study_changed('user_id');

-- What every report reads (as on SQLite).
CREATE CONSTRAINT TRIGGER report_shared_changed AFTER INSERT OR UPDATE OR DELETE ON tasks DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_shared_changed();
CREATE CONSTRAINT TRIGGER report_shared_changed AFTER INSERT OR UPDATE OR DELETE ON data_files DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_shared_changed();
CREATE CONSTRAINT TRIGGER report_shared_changed AFTER INSERT OR UPDATE OR DELETE ON examples DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_shared_changed();
CREATE CONSTRAINT TRIGGER report_shared_changed AFTER INSERT OR UPDATE OR DELETE ON machine_systems DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_shared_changed();
CREATE CONSTRAINT TRIGGER report_shared_changed AFTER INSERT OR UPDATE OR DELETE ON machine_predictions DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_shared_changed();
CREATE CONSTRAINT TRIGGER report_shared_changed AFTER INSERT OR DELETE ON machine_runs DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_shared_changed();
CREATE CONSTRAINT TRIGGER report_shared_changed_runs AFTER UPDATE OF status, s1, s1_any_of, k, split, system_id, task_id, provider ON machine_runs DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_shared_changed();
CREATE CONSTRAINT TRIGGER report_shared_changed AFTER UPDATE OF name, role ON users DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION report_shared_changed();
