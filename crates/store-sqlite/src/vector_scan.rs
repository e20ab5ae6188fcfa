//! The boot-time scan of stored vectors, straight from SQLite's C API.
//!
//! Through the driver every row costs several microseconds (it is copied into a row object,
//! sent across a channel, copied again on decode), which made a 50k-vector boot take most of
//! a second. Here the statement runs on the raw handle of a pooled read connection and each
//! blob is decoded directly into one contiguous buffer that the index then takes over.
#![allow(unsafe_code)]

use std::ffi::{CStr, CString, c_int};
use std::ptr::NonNull;

use libsqlite3_sys as ffi;
use retold_domain::EmbeddingScan;
use sea_orm::sqlx::SqlitePool;

use crate::error::{StoreError, corrupt};

const SQL: &str = "SELECT e.record_key, e.record_id, e.vector, e.sentences FROM embeddings e \
     JOIN records r ON r.key = e.record_key \
     WHERE r.status != 'deleted' AND r.erased_at IS NULL AND e.model = ?1 AND e.version = ?2 AND e.dims = ?3 \
     ORDER BY e.record_key";

/// The scan's rows and their sentence vectors' bytes.
const COUNT: &str = "SELECT count(*), coalesce(sum(length(e.sentences)), 0) FROM embeddings e \
     JOIN records r ON r.key = e.record_key \
     WHERE r.status != 'deleted' AND r.erased_at IS NULL AND e.model = ?1 AND e.version = ?2 AND e.dims = ?3";

/// Finalizes the statement however the scan ends.
struct Statement(NonNull<ffi::sqlite3_stmt>);

impl Drop for Statement {
    fn drop(&mut self) {
        // SAFETY: the pointer came from a successful sqlite3_prepare_v2 and is finalized once.
        unsafe { ffi::sqlite3_finalize(self.0.as_ptr()) };
    }
}

/// A connection reading its database through a memory map until dropped.
struct Mapped(*mut ffi::sqlite3);

impl Mapped {
    /// Most bytes mapped: beyond it, pages are read as before.
    const BYTES: &'static str = "PRAGMA mmap_size = 4294967296";
    const OFF: &'static str = "PRAGMA mmap_size = 0";

    fn new(db: *mut ffi::sqlite3) -> Self {
        Self::exec(db, Self::BYTES);
        Self(db)
    }

    fn exec(db: *mut ffi::sqlite3, sql: &str) {
        let sql = CString::new(sql).expect("no NUL in the pragma");
        // SAFETY: `db` is the live handle the caller holds the lock on; the statement is
        // NUL-terminated, takes no callback and reports errors through the return code only.
        let rc =
            unsafe { ffi::sqlite3_exec(db, sql.as_ptr(), None, std::ptr::null_mut(), std::ptr::null_mut()) };
        if rc != ffi::SQLITE_OK {
            // The scan reads the pages either way; only its speed depends on the map.
            tracing::debug!(rc, "mmap_size not applied to the scan's connection");
        }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        Self::exec(self.0, Self::OFF);
    }
}

/// `sql` prepared on `db` with the model, version and dims bound as ?1, ?2, ?3.
fn prepared(
    db: *mut ffi::sqlite3,
    sql: &str,
    model: &CStr,
    version: u32,
    dims: u32,
) -> Result<Statement, StoreError> {
    let sql = CString::new(sql).expect("no NUL in the statement");
    let mut raw: *mut ffi::sqlite3_stmt = std::ptr::null_mut();
    // SAFETY: `db` is the live handle the caller holds the lock on; `sql` is NUL-terminated;
    // `raw` receives the statement or stays null.
    let rc = unsafe { ffi::sqlite3_prepare_v2(db, sql.as_ptr(), -1, &mut raw, std::ptr::null_mut()) };
    let Some(statement) = NonNull::new(raw).filter(|_| rc == ffi::SQLITE_OK) else {
        return Err(sqlite_error(db, "prepare", rc));
    };
    let statement = Statement(statement);
    let stmt = statement.0.as_ptr();
    // SAFETY: `stmt` is a prepared statement with three parameters; SQLITE_TRANSIENT makes
    // SQLite copy the text, so `model` may be dropped afterwards.
    let binds = unsafe {
        [
            ffi::sqlite3_bind_text(stmt, 1, model.as_ptr(), -1, ffi::SQLITE_TRANSIENT()),
            ffi::sqlite3_bind_int64(stmt, 2, i64::from(version)),
            ffi::sqlite3_bind_int64(stmt, 3, i64::from(dims)),
        ]
    };
    if let Some(rc) = binds.into_iter().find(|rc| *rc != ffi::SQLITE_OK) {
        return Err(sqlite_error(db, "bind", rc));
    }
    Ok(statement)
}

fn sqlite_error(db: *mut ffi::sqlite3, what: &str, rc: c_int) -> StoreError {
    // SAFETY: `db` is a live connection handle; sqlite3_errmsg returns a NUL-terminated
    // string owned by SQLite that stays valid until the next call on this connection.
    let message = unsafe { CStr::from_ptr(ffi::sqlite3_errmsg(db)) }.to_string_lossy().into_owned();
    StoreError::Corrupt { table: "embeddings", reason: format!("{what} failed ({rc}): {message}") }
}

pub(crate) async fn scan(
    pool: &SqlitePool,
    model: &str,
    version: u32,
    dims: u32,
) -> Result<EmbeddingScan, StoreError> {
    let mut connection =
        pool.acquire().await.map_err(|e| StoreError::Db(sea_orm::DbErr::Custom(e.to_string())))?;
    let mut handle =
        connection.lock_handle().await.map_err(|e| StoreError::Db(sea_orm::DbErr::Custom(e.to_string())))?;
    let db = handle.as_raw_handle().as_ptr();
    let model = CString::new(model).map_err(|_| corrupt("embeddings", "model name contains NUL"))?;

    // The scan reads every vector page once: through a memory map rather than a read() of
    // each page into SQLite's cache. Made before the statements, so it is set back after
    // they are finalized.
    let _mapped = Mapped::new(db);
    // How many rows and sentence bytes: the buffers are sized once, not grown (and copied)
    // as the scan fills them. `length` of a blob reads no overflow page.
    let (rows, sentence_bytes) = {
        let counting = prepared(db, COUNT, &model, version, dims)?;
        let stmt = counting.0.as_ptr();
        // SAFETY: `stmt` is valid and bound; stepping is single-threaded under the lock.
        let rc = unsafe { ffi::sqlite3_step(stmt) };
        if rc != ffi::SQLITE_ROW {
            return Err(sqlite_error(db, "step", rc));
        }
        // SAFETY: the statement is on its one row of two integer columns.
        let (rows, bytes) =
            unsafe { (ffi::sqlite3_column_int64(stmt, 0), ffi::sqlite3_column_int64(stmt, 1)) };
        (usize::try_from(rows).unwrap_or(0), usize::try_from(bytes).unwrap_or(0))
    };
    let statement = prepared(db, SQL, &model, version, dims)?;
    let stmt = statement.0.as_ptr();
    let mut out = EmbeddingScan { dims, ..EmbeddingScan::default() };
    out.keys.reserve_exact(rows);
    out.ids.reserve_exact(rows);
    out.vectors.reserve_exact(rows * dims as usize);
    out.sentence_counts.reserve_exact(rows);
    out.sentences.reserve_exact(sentence_bytes / 4);
    loop {
        // SAFETY: `stmt` is valid and bound; stepping is single-threaded under the lock.
        let rc = unsafe { ffi::sqlite3_step(stmt) };
        if rc == ffi::SQLITE_DONE {
            break;
        }
        if rc != ffi::SQLITE_ROW {
            return Err(sqlite_error(db, "step", rc));
        }
        // SAFETY: the statement is on a row with four columns. Each pointer is read (text or
        // blob first, then its byte count, as the SQLite docs require) and copied before the
        // next step invalidates it.
        let (key, id, blob, sentences) = unsafe {
            let key = ffi::sqlite3_column_int64(stmt, 0);
            let id_ptr = ffi::sqlite3_column_text(stmt, 1);
            let id_len = ffi::sqlite3_column_bytes(stmt, 1);
            let id = if id_ptr.is_null() {
                &[][..]
            } else {
                std::slice::from_raw_parts(id_ptr, usize::try_from(id_len).unwrap_or(0))
            };
            let blob_ptr = ffi::sqlite3_column_blob(stmt, 2).cast::<u8>();
            let blob_len = ffi::sqlite3_column_bytes(stmt, 2);
            let blob = if blob_ptr.is_null() {
                &[][..]
            } else {
                std::slice::from_raw_parts(blob_ptr, usize::try_from(blob_len).unwrap_or(0))
            };
            let sentences_ptr = ffi::sqlite3_column_blob(stmt, 3).cast::<u8>();
            let sentences_len = ffi::sqlite3_column_bytes(stmt, 3);
            let sentences = if sentences_ptr.is_null() {
                &[][..]
            } else {
                std::slice::from_raw_parts(sentences_ptr, usize::try_from(sentences_len).unwrap_or(0))
            };
            (key, id, blob, sentences)
        };
        let id = std::str::from_utf8(id).map_err(|e| corrupt("embeddings", e))?.to_owned();
        crate::convert::push_vector(&mut out, key, id, blob, sentences)?;
    }
    Ok(out)
}
