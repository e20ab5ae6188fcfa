//! Retold's canonical store: SQLite through sea-orm, migrations, FTS5 rows, the
//! eligible-id query, and the one-transaction write unit. The only crate with SQL.
