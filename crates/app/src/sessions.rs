//! The session buffer's use-cases (seed section 13): start, append numbered turns, end; and
//! the extraction run an ended session starts.

use std::collections::BTreeMap;
use std::sync::Arc;

use retold_domain::{
    AuditEvent, Clock, DomainError, EventId, EventKind, IdGenerator, Principal, Result, Session, SessionId,
    SourceRef, TurnBuffer, TurnRole,
};
use retold_ingest::{ExtractionReport, ExtractionRunner};
use tokio_util::task::TaskTracker;

/// A turn the buffer numbered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnAppended {
    pub turn: u32,
    /// How a memory cites it: `session:<id><turn:N>`.
    pub source_ref: SourceRef,
}

/// What ending a session started.
#[derive(Debug)]
pub enum SessionEnd {
    /// Extraction ran before the answer (`wait`), with its report.
    Extracted(Result<ExtractionReport>),
    /// Extraction runs in the background.
    Background,
    /// Extraction is off; `status` says why.
    ExtractionOff { status: String },
}

/// Sessions for the principal's own agent and user.
#[derive(Clone)]
pub struct SessionService {
    turns: Arc<dyn TurnBuffer>,
    extraction: Option<ExtractionRunner>,
    extraction_status: String,
    tasks: TaskTracker,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn IdGenerator>,
}

impl std::fmt::Debug for SessionService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionService").field("extraction", &self.extraction_status).finish_non_exhaustive()
    }
}

/// An audit event of the application layer (no record; the actor when an agent caused it).
pub(crate) fn app_event(
    ids: &dyn IdGenerator,
    clock: &dyn Clock,
    kind: EventKind,
    actor: Option<&Principal>,
    details: &[(&str, String)],
) -> AuditEvent {
    AuditEvent {
        id: EventId::from_body(&ids.next_body()).expect("generated ids are valid"),
        at: clock.now(),
        kind,
        record_id: None,
        actor: actor.map(|p| p.agent_id.clone()),
        details: details.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect::<BTreeMap<_, _>>(),
    }
}

impl SessionService {
    /// Sessions over `turns`; `extraction` (when on) runs after a session ends, tracked by
    /// `tasks` so shutdown can wait for runs in flight. `extraction_status` says why it is
    /// on or off.
    pub fn new(
        turns: Arc<dyn TurnBuffer>,
        extraction: Option<ExtractionRunner>,
        extraction_status: String,
        tasks: TaskTracker,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
    ) -> Self {
        Self { turns, extraction, extraction_status, tasks, clock, ids }
    }

    /// The extraction runner, when extraction is on.
    pub fn extraction(&self) -> Option<&ExtractionRunner> {
        self.extraction.as_ref()
    }

    /// `on (…)` or `off (why)`.
    pub fn extraction_status(&self) -> &str {
        &self.extraction_status
    }

    /// Background work (extraction runs) that shutdown waits for.
    pub fn tasks(&self) -> &TaskTracker {
        &self.tasks
    }

    /// A session of the principal's agent and user; any other (or a malformed id) answers
    /// exactly like a missing one.
    pub async fn own(&self, principal: &Principal, id: &str) -> Result<Session> {
        let not_found = || DomainError::NotFound { what: "session", id: id.to_owned() };
        let session_id = SessionId::new(id.to_owned()).map_err(|_| not_found())?;
        match self.turns.session(&session_id).await? {
            Some(s) if s.agent_id == principal.agent_id && s.user_id == principal.user_id => Ok(s),
            _ => Err(not_found()),
        }
    }

    /// Start a session for the principal's agent and user.
    pub async fn start(&self, principal: &Principal) -> Result<Session> {
        let session = Session {
            id: SessionId::from_body(&self.ids.next_body()).expect("generated ids are valid"),
            agent_id: principal.agent_id.clone(),
            user_id: principal.user_id.clone(),
            project_id: principal.project_id.clone(),
            started_at: self.clock.now(),
            ended_at: None,
        };
        let event = app_event(
            self.ids.as_ref(),
            self.clock.as_ref(),
            EventKind::SessionStarted,
            Some(principal),
            &[("session_id", session.id.to_string())],
        );
        self.turns.start_session(session.clone(), event).await?;
        Ok(session)
    }

    /// Append a numbered turn to one of the principal's open sessions.
    pub async fn append(
        &self,
        principal: &Principal,
        id: &str,
        role: TurnRole,
        content: String,
    ) -> Result<TurnAppended> {
        let session = self.own(principal, id).await?;
        let turn = self.turns.append_turn(&session.id, role, content, self.clock.now()).await?;
        Ok(TurnAppended { turn, source_ref: SourceRef::session_turn_ref(&session.id, turn) })
    }

    /// End one of the principal's sessions; its extraction then runs once, before the answer
    /// when `wait`, otherwise in the background.
    pub async fn end(&self, principal: &Principal, id: &str, wait: bool) -> Result<(SessionId, SessionEnd)> {
        let session = self.own(principal, id).await?;
        let event = app_event(
            self.ids.as_ref(),
            self.clock.as_ref(),
            EventKind::SessionEnded,
            Some(principal),
            &[("session_id", session.id.to_string())],
        );
        self.turns.end_session(&session.id, self.clock.now(), self.extraction.is_some(), event).await?;
        let Some(runner) = self.extraction.clone() else {
            return Ok((session.id, SessionEnd::ExtractionOff { status: self.extraction_status.clone() }));
        };
        let id = session.id.clone();
        if wait {
            // The run is its own task: a client that hangs up or a request timeout must not
            // cancel it halfway, since the session is claimed once it starts.
            let run = self
                .tasks
                .spawn(async move { runner.run(&id).await })
                .await
                .map_err(|e| DomainError::backend("extraction task", e.to_string()))?;
            Ok((session.id, SessionEnd::Extracted(run)))
        } else {
            self.tasks.spawn(async move {
                // The runner records the outcome on the session's extraction.run or
                // extraction.failed event and logs failures; nobody waits for the report.
                let _report = runner.run(&id).await;
            });
            Ok((session.id, SessionEnd::Background))
        }
    }
}
