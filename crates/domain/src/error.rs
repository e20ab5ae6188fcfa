//! The domain's one error enum.

/// Boxed error from an adapter behind a port; its text is for logs, never for clients.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Everything that can go wrong inside the domain or behind one of its ports.
///
/// Construction errors (`Invalid`) name the field that was refused, so the
/// edge can answer `validation_failed` with that field. `Backend` wraps an
/// infrastructure failure; its text is logged, not returned.
#[derive(Debug, thiserror::Error)]
pub enum DomainError {
    /// A value was refused at construction.
    #[error("invalid {field}: {reason}")]
    Invalid { field: &'static str, reason: String },

    /// A referenced item does not exist (or the caller may not see it).
    #[error("{what} not found: {id}")]
    NotFound { what: &'static str, id: String },

    /// The requested scope is not among the principal's writable scopes.
    #[error("scope not writable: {scope}")]
    ScopeNotWritable { scope: String },

    /// A name resolved to more than one entity; it is never merged by guess.
    #[error("entity name {name:?} is ambiguous: {candidates:?}")]
    EntityAmbiguous { name: String, candidates: Vec<String> },

    /// The request contradicts the current state (for example an illegal lifecycle
    /// transition, or a duplicate). Retrying the same request cannot succeed.
    #[error("conflict: {0}")]
    Conflict(String),

    /// A concurrent writer changed what this write was decided against (a stale version, a
    /// current-fact key whose active set moved, an entity name created meanwhile). Reading
    /// again and deciding again may succeed: this, and only this, is retried.
    #[error("contention: {0}")]
    Contention(String),

    /// The store cannot take more data (its disk or filesystem is full). Nothing was
    /// written; reads keep working, and the same request succeeds once space is freed.
    #[error("storage full: {0}")]
    StorageFull(String),

    /// The store's disk answered an I/O error. Nothing was written; retrying later may work.
    #[error("storage I/O error: {0}")]
    StorageIo(String),

    /// A component behind a port failed.
    #[error("{component} failed: {source}")]
    Backend {
        component: &'static str,
        #[source]
        source: BoxError,
    },
}

impl DomainError {
    pub(crate) fn invalid(field: &'static str, reason: impl Into<String>) -> Self {
        Self::Invalid { field, reason: reason.into() }
    }

    /// Wrap an adapter failure.
    pub fn backend(component: &'static str, source: impl Into<BoxError>) -> Self {
        Self::Backend { component, source: source.into() }
    }
}

/// Result alias used throughout the domain and its ports.
pub type Result<T, E = DomainError> = std::result::Result<T, E>;
