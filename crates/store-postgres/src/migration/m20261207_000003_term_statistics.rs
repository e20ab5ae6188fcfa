//! Term statistics kept, not counted: `lexical_terms` holds each indexed word's document
//! frequency and `lexical_corpus` the number of lexical rows, both maintained by a trigger on
//! `records_fts` in the writing transaction (as FTS5 keeps its own), so a search reads a term's
//! IDF instead of counting the rows that match it. A word no row holds any more is deleted, so
//! an erased record's words leave the table with it. Every transaction that changes
//! `records_fts` already takes the next change number first (`change_head`, row-locked until
//! commit), so writers run one at a time and the shared rows add no wait and no lock order.
//! The backfill locks `records_fts` against writers (a replica still on the previous binary)
//! until the trigger is in place, and lifts the statement timeout for a large store.

const SCHEMA: &str = r#"
SET LOCAL statement_timeout = 0;
LOCK TABLE records_fts IN SHARE ROW EXCLUSIVE MODE;
CREATE TABLE lexical_terms (
    term TEXT PRIMARY KEY,
    df   BIGINT NOT NULL CHECK (df > 0)
);
CREATE TABLE lexical_corpus (
    one BOOLEAN PRIMARY KEY DEFAULT true CHECK (one),
    n   BIGINT NOT NULL CHECK (n >= 0)
);
INSERT INTO lexical_corpus (n) SELECT count(*) FROM records_fts;
INSERT INTO lexical_terms (term, df) SELECT word, ndoc FROM ts_stat('SELECT doc FROM records_fts');

CREATE FUNCTION lexical_statistics() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    removed TEXT[] := '{}';
    added   TEXT[] := '{}';
BEGIN
    IF TG_OP = 'DELETE' THEN
        removed := tsvector_to_array(OLD.doc);
        UPDATE lexical_corpus SET n = n - 1;
    ELSIF TG_OP = 'INSERT' THEN
        added := tsvector_to_array(NEW.doc);
        UPDATE lexical_corpus SET n = n + 1;
    ELSIF OLD.doc IS DISTINCT FROM NEW.doc THEN
        removed := ARRAY(SELECT unnest(tsvector_to_array(OLD.doc))
                         EXCEPT SELECT unnest(tsvector_to_array(NEW.doc)));
        added := ARRAY(SELECT unnest(tsvector_to_array(NEW.doc))
                       EXCEPT SELECT unnest(tsvector_to_array(OLD.doc)));
    END IF;
    -- The last row holding a word takes it along; the others count one fewer.
    DELETE FROM lexical_terms WHERE term = ANY (removed) AND df = 1;
    UPDATE lexical_terms SET df = df - 1 WHERE term = ANY (removed);
    INSERT INTO lexical_terms (term, df) SELECT w, 1 FROM unnest(added) AS w
        ON CONFLICT (term) DO UPDATE SET df = lexical_terms.df + 1;
    RETURN NULL;
END
$$;
CREATE TRIGGER records_fts_statistics AFTER INSERT OR UPDATE OR DELETE ON records_fts
    FOR EACH ROW EXECUTE FUNCTION lexical_statistics();
"#;

retold_store_sql::sql_migration!(SCHEMA);
