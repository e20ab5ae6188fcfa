//! What request handlers share: the application services (over ports only) and the
//! configured admin key hashes.

use retold_app::Services;

/// Cheap to clone per request. Names no concrete store, index or model: those are chosen
/// once, in `server::build`.
#[derive(Clone, Debug)]
pub struct AppState {
    pub services: Services,
    /// SHA-256 hex of the configured admin key(s).
    pub admin_hashes: Vec<String>,
}
