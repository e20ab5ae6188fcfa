//! Lifecycle transitions (seed section 3). Every pair is decided explicitly.

use retold_domain::Status;

use crate::error::PolicyError;

/// Allow or refuse `from → to`. Staying in the same status is refused: a revise that changes
/// nothing is an error, not a silent no-op.
pub fn transition(from: Status, to: Status) -> Result<(), PolicyError> {
    use Status::{Confirmed, Deleted, Expired, Provisional, Superseded};
    let allowed = match (from, to) {
        (Provisional, Confirmed | Superseded | Expired | Deleted) => true,
        (Confirmed, Superseded | Expired | Deleted) => true,
        // History stays inspectable; it can only be removed.
        (Superseded, Deleted) => true,
        // An expired record may be reactivated by later evidence, or removed.
        (Expired, Provisional | Confirmed | Deleted) => true,
        (Provisional, Provisional) | (Confirmed, Confirmed | Provisional) => false,
        (Superseded, Provisional | Confirmed | Superseded | Expired) => false,
        (Expired, Superseded | Expired) => false,
        // A tombstone never comes back.
        (Deleted, _) => false,
    };
    if allowed { Ok(()) } else { Err(PolicyError::IllegalTransition { from, to }) }
}
