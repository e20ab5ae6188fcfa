//! The transcript and extraction's claims on ended sessions (seed: session buffer and extractor).

use async_trait::async_trait;

use crate::audit::AuditEvent;
use crate::error::Result;
use crate::ids::SessionId;
use crate::record::Timestamp;
use crate::session::{ClaimTerms, ExtractionClaim, Session, SessionTurn};

/// The session buffer: sessions and their numbered turns (seed section 13).
#[async_trait]
pub trait TurnBuffer: Send + Sync {
    /// Record a new session.
    async fn start_session(&self, session: Session, event: AuditEvent) -> Result<()>;
    /// Append a turn under the number it carries, which must be the next (1, 2, …): a number
    /// taken meanwhile is `DomainError::Contention` (read the last turn again). Refused
    /// (`Conflict`) once the session has ended, `NotFound` without the session.
    async fn append_turn(&self, turn: SessionTurn) -> Result<()>;
    /// The session's last turn, if it has any.
    async fn last_turn(&self, id: &SessionId) -> Result<Option<SessionTurn>>;
    /// End a session; refused when it has already ended. `extraction_requested` marks it for
    /// the extraction sweep (extraction was on when it ended).
    async fn end_session(
        &self,
        id: &SessionId,
        at: Timestamp,
        extraction_requested: bool,
        event: AuditEvent,
    ) -> Result<()>;
    /// One session.
    async fn session(&self, id: &SessionId) -> Result<Option<Session>>;
    /// One turn.
    async fn turn(&self, id: &SessionId, turn: u32) -> Result<Option<SessionTurn>>;
    /// Every turn, in order.
    async fn turns(&self, id: &SessionId) -> Result<Vec<SessionTurn>>;
}

/// Extraction claims on ended sessions: each is extracted once.
#[async_trait]
pub trait ExtractionClaims: Send + Sync {
    /// Claim an ended session for extraction. Of any number of concurrent claimants at most
    /// one gets `Claimed`; a claim older than `terms.lapsed_before` that never finished may be
    /// taken over, up to `terms.max_attempts` claims in all.
    async fn claim_extraction(
        &self,
        id: &SessionId,
        claimant: &str,
        terms: ClaimTerms,
    ) -> Result<ExtractionClaim>;
    /// Mark the claimant's extraction of the session finished; it is never claimed again.
    async fn finish_extraction(&self, id: &SessionId, claimant: &str, at: Timestamp) -> Result<()>;
    /// Give the claimant's claim back after a failed run, so a later attempt may retry.
    async fn release_extraction(&self, id: &SessionId, claimant: &str) -> Result<()>;
    /// Sessions that ended with extraction requested and still need it (never claimed, or a
    /// lapsed claim, with attempts left), oldest end first.
    async fn pending_extractions(&self, limit: usize, terms: ClaimTerms) -> Result<Vec<SessionId>>;
}
