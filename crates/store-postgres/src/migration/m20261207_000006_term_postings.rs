//! Term postings kept, not ranked per search: one row per word of a lexical row (the
//! `tsvector`'s lexeme) and record, holding that word's `ts_rank` in the record (the
//! channel's column weights, length normalisation 1). The channel's score is a sum over the
//! query's words of IDF × `ts_rank(doc, word)`, and for a word of one lexeme that rank depends
//! on the record and the word alone, so summing kept rows through an index-only scan gives
//! the scores ranking every matching `tsvector` gave, without reading one. A trigger on
//! `records_fts` keeps them in the writing transaction beside the term statistics; a changed
//! document rewrites its record's rows (its length changes every weight). The backfill locks
//! `records_fts` against writers until the trigger is in place, builds the index after the
//! rows, and analyses the table. The column weights are the lexical channel's `WEIGHTS`
//! (`lexical.rs`), written here again: changing one means a migration rewriting the other.
//! An erasure deletes a record's rows with it, and compaction rewrites the table.

const SCHEMA: &str = r#"
SET LOCAL statement_timeout = 0;
LOCK TABLE records_fts IN SHARE ROW EXCLUSIVE MODE;
CREATE FUNCTION lexeme_query(lexeme TEXT) RETURNS tsquery LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT ('''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || '''')::tsquery
$$;
CREATE FUNCTION lexeme_rank(doc tsvector, lexeme TEXT) RETURNS real LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT ts_rank('{0.0, 0.333333, 0.666667, 1.0}'::float4[], doc, lexeme_query(lexeme), 1)
$$;
CREATE TABLE lexical_postings (
    term   TEXT NOT NULL,
    key    BIGINT NOT NULL,
    weight REAL NOT NULL
);
INSERT INTO lexical_postings (term, key, weight)
    SELECT u.lexeme, f.key, lexeme_rank(f.doc, u.lexeme) FROM records_fts f, unnest(f.doc) u;
ALTER TABLE lexical_postings ADD PRIMARY KEY (term, key) INCLUDE (weight);
ANALYZE lexical_postings;

CREATE FUNCTION lexical_postings_kept() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.doc IS NOT DISTINCT FROM NEW.doc THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        DELETE FROM lexical_postings WHERE key = OLD.key AND term = ANY (tsvector_to_array(OLD.doc));
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO lexical_postings (term, key, weight)
            SELECT u.lexeme, NEW.key, lexeme_rank(NEW.doc, u.lexeme) FROM unnest(NEW.doc) u;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER records_fts_postings AFTER INSERT OR UPDATE OR DELETE ON records_fts
    FOR EACH ROW EXECUTE FUNCTION lexical_postings_kept();
"#;

retold_store_sql::sql_migration!(SCHEMA);
