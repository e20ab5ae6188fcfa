//! Erasure may blank an audit event's details (and nothing else): the event's kind, ids,
//! actor and time stay, so the trail still says what happened and when, without the content.

const SCHEMA: &str = r#"
DROP TRIGGER events_no_update;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
WHEN NOT (NEW.details = '{"erased":"true"}' AND NEW.seq = OLD.seq AND NEW.id = OLD.id
          AND NEW.at = OLD.at AND NEW.kind = OLD.kind AND NEW.record_id IS OLD.record_id
          AND NEW.actor IS OLD.actor)
BEGIN SELECT RAISE(ABORT, 'events are append-only (an erasure may only blank their details)'); END;
"#;

retold_store_sql::sql_migration!(SCHEMA);
